//! The loss-recovery variants, selectable by name: each is a module behind
//! [`super::recovery::Recovery`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::recovery::Recovery;

/// The sender variants available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    /// Tahoe: fast retransmit, then slow start from one segment (go-back-N), as NS-2's `TCP`.
    Tahoe,
    /// Reno (RFC 5681): fast retransmit and fast recovery.
    Reno,
    /// NewReno (RFC 6582): fast recovery that stays on through partial ACKs.
    NewReno,
    /// SACK-based loss recovery (RFC 6675), like NS-2's `Sack1`.
    Sack,
}

impl TcpVariant {
    /// Every variant.
    pub const ALL: [TcpVariant; 4] = [
        TcpVariant::Tahoe,
        TcpVariant::Reno,
        TcpVariant::NewReno,
        TcpVariant::Sack,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            TcpVariant::Tahoe => "tahoe",
            TcpVariant::Reno => "reno",
            TcpVariant::NewReno => "newreno",
            TcpVariant::Sack => "sack",
        }
    }

    /// A fresh recovery algorithm of this variant.
    pub fn recovery(self) -> Box<dyn Recovery> {
        match self {
            TcpVariant::Tahoe => Box::new(super::tahoe::Tahoe::default()),
            TcpVariant::Reno => Box::new(super::reno::Reno::default()),
            TcpVariant::NewReno => Box::new(super::newreno::NewReno::default()),
            TcpVariant::Sack => Box::new(super::sack::Sack::default()),
        }
    }

    /// Whether the variant needs SACK information from the receiver.
    pub fn uses_sack(self) -> bool {
        self.recovery().uses_sack()
    }
}

impl fmt::Display for TcpVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TcpVariant {
    type Err = String;
    fn from_str(s: &str) -> Result<TcpVariant, String> {
        let lower = s.to_ascii_lowercase();
        let lower = if lower == "sack1" {
            "sack".to_string()
        } else {
            lower
        };
        TcpVariant::ALL
            .into_iter()
            .find(|v| v.name() == lower)
            .ok_or_else(|| {
                format!("unknown TCP variant {s:?} (expected tahoe, reno, newreno or sack)")
            })
    }
}
