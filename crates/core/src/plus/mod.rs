//! `taroc-plus`: a redesigned TAROC profile. It keeps TAROC's core — every field W-LSB coded
//! against a window of references (the VSW, [`crate::tcp::vsw`]) bounded by congestion-window
//! tracking ([`crate::tcp::cwnd`]), the TCP checksum verified before anything is delivered or
//! committed — and spends fewer bytes on what measurement showed to be costly:
//!
//! - the packet type, the sizes of the sequence and acknowledgment fields and PSH are folded
//!   into the link's frame-kind byte ([`crate::FrameKind::Profile`]); CID 0 costs nothing;
//! - sequence and acknowledgment numbers are coded *scaled* by a per-context stride (the
//!   segment size, the ACK step) when every reference in the window shares the residue
//!   ([`scaled`]);
//! - the IPv4 Identification is coded as an offset from the scaled numbers, with sequential,
//!   byte-swapped, zero and random behaviours detected per flow ([`ipid`]);
//! - the window, the R-octet, the urgent pointer, SACK blocks and the CID are sent only when
//!   present or changed, their presence in one extension octet;
//! - a new flow's first IR frames name the opposite direction's flow instead of the addresses
//!   and ports ([`mirror`]) and code their numbers against a packet of it ([`numbers`]);
//! - a start ends once a frame from the far end codes its numbers against one of the start's
//!   IR frames, on a link that does not lose frames: a reference receipt ([`receipt`]).
//!
//! The liveness repairs of [`crate::tcp::repair`] (context requests, TCP distress, periodic
//! refresh) apply unchanged. The wire format, the decompressor's rules and test vectors are in
//! `docs/taroc-plus-format.md`.
//!
//! Each frame kind is read and written in one module, used by both ends: [`ir`], [`ir_r`],
//! [`co`], [`compact`], [`packed`], [`handshake`], [`receipt`], [`note`] and [`other`].
//!
//! What it shares with the draft (packet parsing, the window, the tracking, the repairs) comes
//! from [`crate::tcp`], nothing from the draft's own module; its settings are [`PlusConfig`],
//! its counters [`PlusStats`].

pub mod ack;
pub mod breakdown;
pub mod cids;
pub mod co;
pub mod compact;
pub mod compressor;
pub mod config;
pub mod decompressor;
pub mod format;
pub mod handshake;
pub mod ipid;
pub mod ir;
pub mod ir_r;
pub mod late;
pub mod mirror;
pub mod note;
pub mod numbers;
pub mod other;
pub mod outer;
pub mod packed;
pub mod ports;
pub mod receipt;
pub mod scaled;
pub mod seal;
pub mod stale;
pub mod stats;
#[cfg(test)]
mod tests;
pub mod window;

pub use compressor::PlusCompressor;
pub use config::PlusConfig;
pub use decompressor::PlusDecompressor;
pub use stats::PlusStats;
