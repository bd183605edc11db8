//! `taroc-plus`'s settings: the window tracking and limits it shares with TAROC, and the repairs.

use crate::tcp::cwnd::issthresh_for_link;
use crate::tcp::repair::{LinkLoss, Repair};

/// `taroc-plus`'s settings. The coding itself has none: the profile's wire format is fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlusConfig {
    /// The window spans K times the tracked congestion window (TAROC's K, default 2).
    pub k: u32,
    /// Estimated MSS in bytes, for the congestion-window tracking (default 1500).
    pub mss: u32,
    /// ISSTHRESH in bytes: initial ssthresh of both trackers, about 2 * bandwidth * delay of the
    /// link ([`issthresh_for_link`]). Default 2 * 2 Mbit/s * 50 ms = 25000 bytes.
    pub issthresh: u32,
    /// Most TCP contexts (CIDs) the compressor uses, 1..=256 (default 256).
    pub max_contexts: usize,
    /// Most window entries per context (default 256); a context keeps no more than
    /// [`MAX_WINDOW_PACKETS`](super::compressor::MAX_WINDOW_PACKETS) whatever this says.
    pub max_vsw_entries: usize,
    /// The bounded repairs ([`crate::tcp::repair`]): all off by default; the `taroc-plus`
    /// scheme turns every one on ([`Repair::live`]), `taroc-plus-u` all but context requests.
    pub repair: Repair,
    /// What the link is known to lose from the start, as whoever sets it up declares it
    /// (default [`LinkLoss::Unseen`]): the compressor takes it as it takes a loss note
    /// ([`LinkLoss::Frames`]) or a burst note ([`LinkLoss::Bursts`]), for good. A link used one
    /// way only carries no frame back, so no note ever comes: `taroc-plus-u-lossy` declares
    /// bursts.
    pub link_loss: LinkLoss,
}

impl Default for PlusConfig {
    fn default() -> PlusConfig {
        PlusConfig {
            k: 2,
            mss: 1500,
            issthresh: issthresh_for_link(2_000_000, 50_000),
            max_contexts: 256,
            max_vsw_entries: 256,
            repair: Repair::default(),
            link_loss: LinkLoss::Unseen,
        }
    }
}
