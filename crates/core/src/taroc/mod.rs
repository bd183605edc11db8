//! TAROC: TCP-Aware RObust header Compression (draft-ietf-rohc-tcp-taroc-00), as drafted.
//!
//! The compressor sends each field of a TCP/IP header as the fewest least significant bits that
//! decode correctly against *any* reference the decompressor may hold (W-LSB, [`crate::encoding::wlsb`]),
//! and bounds the set of such references (the VSW, [`crate::tcp::vsw`]) by tracking the TCP
//! sender's congestion window from the sequence numbers
//! ([`SeqTracker`](crate::tcp::cwnd::SeqTracker), Algorithm SEQ) and acknowledgment numbers
//! ([`AckTracker`](crate::tcp::cwnd::AckTracker), Algorithm ACK) it sees. No feedback channel is needed. The decompressor rebuilds each packet
//! against its reference, verifies the TCP checksum, and only then delivers it and takes it as
//! the new reference.
//!
//! This module is the draft's formats and rules; the parts `taroc-plus` shares with it (packet
//! parsing, the VSW, congestion-window tracking, contexts' identities, the bounded repairs) are
//! in [`crate::tcp`]. Every reading of the draft this implementation makes is listed, with the
//! test that backs it, in `docs/taroc-interpretations.md`.

pub mod compressor;
pub mod decompressor;
pub mod format;
#[cfg(test)]
mod repair_tests;
pub mod stats;
#[cfg(test)]
pub(crate) mod tests;

pub use crate::tcp::cwnd::issthresh_for_link;
/// The packets TAROC carries ([`crate::tcp::packet`], shared with `taroc-plus`).
pub use crate::tcp::packet;
/// The bounded repairs ([`crate::tcp::repair`], shared with `taroc-plus`).
pub use crate::tcp::repair;
pub use compressor::{State, TarocCompressor};
pub use decompressor::TarocDecompressor;
pub use repair::Repair;
pub use stats::{Part, TarocStats, Why};

/// TAROC's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TarocConfig {
    /// K of draft section 8.1: the VSW spans K times the tracked window (default 2).
    pub k: u32,
    /// Estimated MSS in bytes. The draft lets the link MTU stand in for it (default 1500).
    pub mss: u32,
    /// ISSTHRESH in bytes: initial ssthresh of both trackers; the draft suggests
    /// 2 * bandwidth * delay of the link. Default 2 * 2 Mbit/s * 50 ms = 25000 bytes.
    pub issthresh: u32,
    /// Most contexts (CIDs) the compressor uses, 1..=256 (default 256).
    pub max_contexts: usize,
    /// Most VSW entries per context, so memory stays bounded whatever the traffic (default 256,
    /// at least 2).
    pub max_vsw_entries: usize,
    /// Departures from the draft, all off by default ([`TarocConfig::plus`] turns them on).
    pub improvements: Improvements,
    /// Bounded context repair ([`repair`]): all off by default (the draft has none);
    /// [`TarocConfig::plus`] turns every repair on ([`Repair::live`]).
    pub repair: Repair,
}

/// The departures from the draft of the previous `taroc-plus` profile ([`TarocConfig::plus`]).
///
/// The first two change the compressor only; they answer what the live gateway found with Linux
/// TCP (SACK recovery that interleaves retransmissions with new data, BBR's window that never
/// halves): the draft's window estimate falls short of the real flight, retransmissions fall
/// behind the VSW, and the draft's answer (clear the VSW, send an UNCOMPRESSED_TCP) turns one
/// lost frame into context damage. The third changes the meaning of COMPRESSED_TCP's checksum
/// field, so both ends must agree on it: it closes the one way a draft decompressor can deliver
/// a wrong packet (a wrongly decoded IPv4 IP-ID, which the TCP checksum does not cover).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Improvements {
    /// A packet behind the VSW (draft 7.1.2 a) is W-LSB coded against the window like any other,
    /// instead of clearing the VSW and restarting slow-start. It decodes against every reference
    /// the VSW holds, and (being older) does not become the decompressor's reference.
    pub code_behind_window: bool,
    /// Entries leave the VSW by the new data sent since they were pushed
    /// ([`Progress::SincePush`](crate::tcp::vsw::Progress::SincePush)), so an older packet
    /// that became the decompressor's reference (an UNCOMPRESSED_TCP retransmission, draft
    /// 7.2 b) stays for a window's worth of new data, as a new packet would.
    pub progress_since_push: bool,
    /// COMPRESSED_TCP's checksum field carries the TCP checksum plus the IPv4 Identification
    /// (mod 2^16); the decompressor subtracts the IP-ID it decoded before verifying, so a wrong
    /// IP-ID fails the TCP checksum instead of being delivered.
    pub checksum_covers_ip_id: bool,
    /// How many more UNCOMPRESSED_TCP packets follow the first one back to back when a context
    /// (re)starts slow-start (draft 7.1.1: one, then a COMPRESSED_TCP). The draft's first
    /// COMPRESSED_TCP has only that one packet as its reference, so losing it costs the next
    /// packet too; one repeat (`taroc-plus`) makes that take two losses in a row.
    pub start_repeats: u8,
}

impl TarocConfig {
    /// The previous `taroc-plus` profile (before its own wire format, [`crate::plus`]): the
    /// draft's format with every [`Improvements`] and every [`Repair`] on. Kept for comparison:
    /// `examples/loss_pairs.rs --plus` and the figures it measured (`docs/results/robustness.md`)
    /// use it.
    pub fn plus() -> TarocConfig {
        TarocConfig {
            improvements: Improvements {
                code_behind_window: true,
                progress_since_push: true,
                checksum_covers_ip_id: true,
                start_repeats: 1,
            },
            repair: Repair::live(),
            ..TarocConfig::default()
        }
    }
}

impl Default for TarocConfig {
    fn default() -> TarocConfig {
        TarocConfig {
            k: 2,
            mss: 1500,
            issthresh: issthresh_for_link(2_000_000, 50_000),
            max_contexts: 256,
            max_vsw_entries: 256,
            improvements: Improvements::default(),
            repair: Repair::default(),
        }
    }
}
