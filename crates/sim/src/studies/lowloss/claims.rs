//! The paper's claims, checked on a study's results: each claim holds, fails, or is not checked
//! (its schemes or BERs did not run).

use super::runs::Results;
use super::topology::Topology;
use crate::studies::{Checked, Verdict};

/// A checked claim: what it says, what we measured, the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The claim.
    pub claim: &'static str,
    /// What we measured.
    pub measured: String,
    /// The verdict.
    pub verdict: Verdict,
}

/// The goodput of `scheme` relative to `base` (ours ÷ base − 1), at `ber` on `topology`.
fn gain(r: &Results, t: Topology, ber: f64, scheme: &str, base: &str) -> Option<f64> {
    Some(r.cell(t, ber, scheme)?.goodput() / r.cell(t, ber, base)?.goodput() - 1.0)
}

fn check(claim: &'static str, value: Option<f64>, ok: impl Fn(f64) -> bool) -> Claim {
    match value {
        Some(v) if v.is_finite() => Claim {
            claim,
            measured: format!("{:+.1}%", v * 100.0),
            verdict: if ok(v) {
                Verdict::Holds
            } else {
                Verdict::Fails
            },
        },
        _ => Claim {
            claim,
            measured: "-".into(),
            verdict: Verdict::NotChecked,
        },
    }
}

/// Checks every claim on `r`.
pub fn check_all(r: &Results) -> Vec<Claim> {
    let (m, w) = (Topology::Modem, Topology::Wlan);
    let mut out = vec![
        check(
            "Fig. 10, Modem 2e-7: iphc-plain 8-25% above none",
            gain(r, m, 2e-7, "iphc-plain", "none"),
            |g| (0.08..=0.25).contains(&g),
        ),
        check(
            "Fig. 11, Modem 2e-6: iphc-plain above none",
            gain(r, m, 2e-6, "iphc-plain", "none"),
            |g| g > 0.0,
        ),
        check(
            "Fig. 12, WLAN 2e-7: none within 15% of 620 kbit/s",
            r.cell(w, 2e-7, "none").map(|c| c.kbps() / 620.0 - 1.0),
            |g| g.abs() <= 0.15,
        ),
        check(
            "Fig. 12, WLAN 2e-7: iphc-plain 10-40% below none",
            gain(r, w, 2e-7, "iphc-plain", "none"),
            |g| (-0.40..=-0.10).contains(&g),
        ),
        check(
            "Fig. 14, WLAN 2e-7: ideal-5 15-40% above none",
            gain(r, w, 2e-7, "ideal-5", "none"),
            |g| (0.15..=0.40).contains(&g),
        ),
        check(
            "Fig. 18, WLAN 2e-7: iphc-twice within 5% of ideal-5",
            gain(r, w, 2e-7, "iphc-twice", "ideal-5"),
            |g| g.abs() <= 0.05,
        ),
        check(
            "Fig. 18, WLAN 2e-7: iphc (twice + request) within 5% of ideal-5",
            gain(r, w, 2e-7, "iphc", "ideal-5"),
            |g| g.abs() <= 0.05,
        ),
    ];
    let low: Vec<f64> = r
        .options
        .bers
        .iter()
        .copied()
        .filter(|&b| b <= 1e-8)
        .collect();
    let high: Vec<f64> = r
        .options
        .bers
        .iter()
        .copied()
        .filter(|&b| b >= 1e-5)
        .collect();
    for scheme in ["iphc-twice", "iphc"] {
        // "At or above": within 1% (random effects) counts as at.
        let worst_low = low
            .iter()
            .filter_map(|&b| gain(r, w, b, scheme, "iphc-plain"))
            .reduce(f64::min);
        out.push(check(
            if scheme == "iphc" {
                "Fig. 19, WLAN BER <= 1e-8: iphc at or above iphc-plain (worst)"
            } else {
                "Fig. 19, WLAN BER <= 1e-8: iphc-twice at or above iphc-plain (worst)"
            },
            worst_low,
            |g| g >= -0.01,
        ));
        let worst_high = high
            .iter()
            .filter_map(|&b| gain(r, w, b, scheme, "none"))
            .reduce(f64::min);
        out.push(check(
            if scheme == "iphc" {
                "Fig. 19, WLAN BER >= 1e-5: iphc above none (worst)"
            } else {
                "Fig. 19, WLAN BER >= 1e-5: iphc-twice above none (worst)"
            },
            worst_high,
            |g| g > 0.0,
        ));
    }
    out
}

impl Checked for Claim {
    fn verdict(&self) -> Verdict {
        self.verdict
    }
}
