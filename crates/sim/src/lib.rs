//! A deterministic packet-level discrete-event simulator that runs the real taroc codecs
//! (actual header bytes, actual checksum verification) under real TCP congestion control, and
//! reproduces the seeds' evaluations: Appendix B of the TAROC draft, the DCLOR draft's
//! spurious-timeout study, Wang & Kung's TCP decoupling and Degermark et al.'s low-loss
//! header compression.
//!
//! Layers: [`event`] (the event queue), [`link`] (bandwidth, delay, DropTail, bit errors),
//! [`tcp`] (senders, receiver, packets), [`net`] (nodes, links with codecs, the event loop),
//! [`scenario`] (the draft's topology and others), [`reproduce`] (the Appendix B grid),
//! [`mod@reference`] (the draft's numbers), [`plot`] (SVG charts), [`outage`] (how long a flow stays
//! broken), [`studies::tracking`] (accuracy of TAROC's congestion-window tracking) and, above the
//! scenarios and the reproductions that make them, [`builtins`] (the scenarios by name).
//! Beside them: [`queue`] (DropTail, RED, header-first), [`tunnel`] (IP-in-IP), [`topology`]
//! (multi-flow dumbbells), [`stis`] (the DCLOR draft's stall model), and the studies [`dclor`],
//! [`decoupling`] and [`lowloss`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod builtins;
pub mod cli;
pub mod dclor;
pub mod decoupling;
pub mod event;
pub mod link;
pub mod lowloss;
pub mod net;
pub mod outage;
pub mod plot;
pub mod progress;
pub mod queue;
pub mod reference;
pub mod reproduce;
pub mod scenario;
pub mod stis;
pub mod studies;
pub mod tcp;
pub mod thin;
pub mod topology;
pub mod tunnel;
