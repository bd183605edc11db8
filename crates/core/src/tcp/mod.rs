//! What both TAROC profiles ([`crate::taroc`], the draft as written, and [`crate::plus`],
//! `taroc-plus`) are built on, owned by neither: a change here changes both, and each profile's
//! wire format and rules stay in its own module.
//!
//! - [`packet`]: what a TCP/IP packet a profile carries is made of (its flow, its template, the
//!   W-LSB fields), parsed in place, and the packet rebuilt from those parts;
//! - [`vsw`]: the compressor's sliding window of potential references (VSW) and the W-LSB bit
//!   counts it implies;
//! - [`cwnd`]: the TCP congestion-window tracking that bounds the window (the draft's Algorithms
//!   SEQ and ACK);
//! - [`context`]: what both ends of a context agree on for as long as it lives;
//! - [`repair`]: the bounded repairs (TCP distress, periodic refresh, context requests);
//! - [`stats`]: the reasons and parts the profiles' statistics count by.

pub mod context;
pub mod cwnd;
pub mod packet;
pub mod repair;
#[cfg(test)]
pub(crate) mod spec;
pub mod stats;
pub mod vsw;
