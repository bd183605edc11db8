//! Accuracy of TAROC's congestion-window tracking (the slides' plots): the real sender's cwnd
//! and ssthresh over time beside the estimates of Algorithm SEQ (from the data stream, at the
//! router's compressor) and Algorithm ACK (from the ACK stream, at the mobile host's
//! compressor).
//!
//! The estimates are read from the real `TarocCompressor` (`estimates_of`) after every packet it
//! compresses; the sender's values from its own trace. Both are compared at the instants the
//! compressor takes a packet, so the estimate is judged against what the sender holds at that
//! moment (the compressor sees the data stream one wired delay after the sender, and the ACK
//! stream one wireless delay plus the wired delay before the sender does).

mod accuracy;
mod plots;
mod runs;
mod trace;

pub use accuracy::{Accuracy, AccuracySums};
pub use plots::svg;
pub use runs::{ack_estimates, run, seq_estimates, slides_case, Tracked};
pub use trace::{EstimateTrace, EstimateTracer, TrackerPoint};
