//! What the study runs: Table 1's box, Table 2's traffic mix, and our readings of what the
//! draft leaves open, as one configuration.

use serde::Serialize;
use taroc_core::variant::Variant;

use super::stis::StisParams;
use crate::tcp::timeout::ResponseKind;

/// One row of Table 2: `connections` processes each downloading a file of `kb` kilobytes
/// `iterations` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FileClass {
    /// File size in kilobytes.
    pub kb: u64,
    /// Simultaneous connections.
    pub connections: u32,
    /// Downloads per connection.
    pub iterations: u32,
    /// Whether its downloads are measured (the draft reports 5, 10 and 100 KB; the larger files
    /// are background load).
    pub measured: bool,
}

/// Table 2 of the draft.
pub const TABLE2: [FileClass; 5] = [
    FileClass {
        kb: 5,
        connections: 6,
        iterations: 2000,
        measured: true,
    },
    FileClass {
        kb: 10,
        connections: 5,
        iterations: 1000,
        measured: true,
    },
    FileClass {
        kb: 100,
        connections: 5,
        iterations: 100,
        measured: true,
    },
    FileClass {
        kb: 1000,
        connections: 3,
        iterations: 10,
        measured: false,
    },
    FileClass {
        kb: 10000,
        connections: 1,
        iterations: 1,
        measured: false,
    },
];

/// Table 2 with the iterations divided by `divisor` (at least one each).
pub fn scaled_mix(divisor: u32) -> Vec<FileClass> {
    TABLE2
        .iter()
        .map(|c| FileClass {
            iterations: c.iterations.div_ceil(divisor.max(1)),
            ..*c
        })
        .collect()
}

/// One configuration of the study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyConfig {
    /// The STIS box.
    pub stis: StisParams,
    /// Bytes per kilobyte (1000 or 1024) for the file sizes.
    pub kb: u64,
    /// The traffic mix.
    pub mix: Vec<FileClass>,
    /// The timeout response of every sender.
    pub response: ResponseKind,
    /// Path MTU, bytes (1500).
    pub mtu: usize,
    /// Initial window, segments (default 3: RFC 2414's and RFC 3390's min(4 MSS, max(2 MSS,
    /// 4380 bytes)) for an MSS of 1460).
    pub initial_window: u32,
    /// The receiver's window, bytes.
    pub rwnd_bytes: u64,
    /// Minimum RTO, ms.
    pub min_rto_ms: u64,
    /// Longest random wait before and between downloads, seconds (uniform from 0).
    pub max_wait_s: f64,
    /// Seed of the stall chains, reordering and waits.
    pub seed: u64,
    /// The header-compression scheme on the radio link (one compressor/decompressor pair per
    /// direction, shared by every connection), or none: packets cross unchanged.
    #[serde(skip)]
    pub scheme: Option<Variant>,
    /// Bytes the link spends per frame beyond the frame itself, with header compression (1:
    /// the frame-kind byte, as the simulator's other links).
    pub frame_overhead: usize,
}

impl StudyConfig {
    /// Table 1 and Table 2 (iterations divided by `divisor`), our defaults for what the draft
    /// leaves open.
    pub fn draft(response: ResponseKind, divisor: u32, seed: u64) -> StudyConfig {
        StudyConfig {
            stis: StisParams::table1(1000),
            kb: 1000,
            mix: scaled_mix(divisor),
            response,
            mtu: 1500,
            initial_window: 3,
            rwnd_bytes: 65535,
            min_rto_ms: 200,
            max_wait_s: 2.0,
            seed,
            scheme: None,
            frame_overhead: 1,
        }
    }

    /// Segment size: the MTU less 40 bytes of headers and 12 of timestamps when the response
    /// uses them (the draft's MSS 1460, Eifel's 1448).
    pub fn mss(&self) -> usize {
        self.mtu
            - 40
            - if self.response.uses_timestamps() {
                12
            } else {
                0
            }
    }
}
