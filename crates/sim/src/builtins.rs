//! The built-in scenarios by name: the default, the slides' window-tracking case, Degermark et
//! al.'s two topologies and one per row of the draft's Appendix B tables. This module sits
//! above [`crate::scenario`] (which knows no study) and the studies that make them
//! ([`crate::studies`]).

use crate::scenario::{default_sim, Scenario};
use crate::studies::appendix_b;

/// The names of the built-in scenarios (besides `appendix-b-KBPS-BER`, one per row of the
/// draft's tables, e.g. `appendix-b-9.6-1e-5`).
pub const BUILTINS: [&str; 4] = ["default", "slides-cwnd", "low-loss-modem", "low-loss-wlan"];

/// A built-in scenario by name: `default` ([`default_sim`]), `slides-cwnd` (the slides'
/// congestion-window tracking case: 9.6 kbit/s, BER 1e-5, MTU 296, SACK, TAROC) or
/// `appendix-b-KBPS-BER` (a row of the draft's tables with its TCP and MTU, TAROC), or
/// `low-loss-modem` / `low-loss-wlan` (Degermark et al.'s topologies at BER 2e-7, 500 s,
/// `iphc-plain`: [`crate::studies::lowloss::topology`]).
pub fn builtin(name: &str) -> Option<Scenario> {
    match name {
        "default" => return Some(default_sim()),
        "slides-cwnd" => return Some(crate::studies::tracking::slides_case()),
        "low-loss-modem" | "low-loss-wlan" => {
            use crate::studies::lowloss::topology::Topology;
            let t = if name == "low-loss-modem" {
                Topology::Modem
            } else {
                Topology::Wlan
            };
            return Some(t.scenario("iphc-plain", 2e-7, 500.0, 1));
        }
        _ => {}
    }
    let rest = name.strip_prefix("appendix-b-")?;
    let (kbps, ber) = rest.split_once('-')?;
    let rows = appendix_b::reference::rows().ok()?;
    let row = rows.iter().find(|r| {
        kbps.parse::<f64>().ok() == Some(r.bandwidth_kbps) && ber.parse::<f64>().ok() == Some(r.ber)
    })?;
    Some(appendix_b::scenario(row, "taroc", 1, 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_round_trip_through_toml() {
        for name in [
            "default",
            "slides-cwnd",
            "appendix-b-9.6-1e-5",
            "appendix-b-384-1e-3",
            "low-loss-modem",
            "low-loss-wlan",
        ] {
            let s = builtin(name).unwrap();
            let text = s.to_toml();
            assert!(text.contains("# Wireless bandwidth"), "{text}");
            assert_eq!(Scenario::from_toml(&text).unwrap(), s, "{name}: {text}");
        }
        assert!(builtin("appendix-b-9.6-1e-9").is_none());
        assert!(builtin("nonsense").is_none());
    }
}
