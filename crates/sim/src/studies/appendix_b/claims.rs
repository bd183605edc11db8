//! The draft's qualitative claims about its Appendix B, checked on our grid: each one holds,
//! fails (on which rows, by how much) or is not checked (which of its schemes did not run).

use std::fmt::Write as _;

use super::reference::{self, Row};
use super::runs::{cell, Grid};
use crate::studies::{Checked, Verdict};

/// One of the draft's qualitative claims.
#[derive(Debug, Clone, Copy)]
pub struct Claim {
    /// The claim in words.
    pub text: &'static str,
    /// The schemes it compares (our names); it is checked only if all of them ran.
    pub schemes: &'static [&'static str],
    /// Whether it applies to a row at this BER.
    applies: fn(f64) -> bool,
    /// The row's violation, if any, given each scheme's goodput there (in `schemes` order).
    violation: fn(&Row, &[f64]) -> Option<String>,
}

/// The claims, in the draft's order.
pub const CLAIMS: [Claim; 4] = [
    Claim {
        text: "VJHC below NONE at BER 3e-6 to 1e-4",
        schemes: &["vj", "none"],
        applies: |ber| (3e-6..=1e-4).contains(&ber),
        violation: |_, g| {
            (g[0] >= g[1]).then(|| format!("VJHC {:.0} not below NONE {:.0}", g[0], g[1]))
        },
    },
    Claim {
        text: "IPHC below NONE at BER 3e-6 to 1e-4",
        schemes: &["iphc", "none"],
        applies: |ber| (3e-6..=1e-4).contains(&ber),
        violation: |_, g| {
            (g[0] >= g[1]).then(|| format!("IPHC {:.0} not below NONE {:.0}", g[0], g[1]))
        },
    },
    Claim {
        text: "TAROC above NONE from BER 1e-6 on",
        schemes: &["taroc", "none"],
        applies: |ber| ber >= 1e-6,
        violation: |_, g| {
            (g[0] <= g[1]).then(|| format!("TAROC {:.0} not above NONE {:.0}", g[0], g[1]))
        },
    },
    Claim {
        text: "TAROC within 5% of IDEAL up to BER 1e-5, within 10% at 3e-5 and 1e-4",
        schemes: &["taroc", "ideal"],
        applies: |ber| ber <= 1e-4,
        violation: |row, g| {
            let limit = if row.ber <= 1e-5 { 0.05 } else { 0.10 };
            (g[0] < (1.0 - limit) * g[1]).then(|| {
                format!(
                    "TAROC {:.0} more than {:.0}% below IDEAL {:.0}",
                    g[0],
                    limit * 100.0,
                    g[1]
                )
            })
        },
    },
];

/// What our grid says of one claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// It holds on every row it applies to (this many).
    Holds(usize),
    /// It fails on these rows (one line each: the row and the numbers).
    Fails(Vec<String>),
    /// Not checked: these of its schemes did not run.
    NotChecked(Vec<&'static str>),
}

/// Checks every claim of [`CLAIMS`] on `grid`.
pub fn check(grid: &Grid) -> Vec<(Claim, Finding)> {
    let rows = reference::rows().unwrap_or_default();
    CLAIMS
        .iter()
        .map(|claim| {
            let missing: Vec<&'static str> = claim
                .schemes
                .iter()
                .copied()
                .filter(|s| !grid.cells.iter().any(|c| c.scheme == *s))
                .collect();
            if !missing.is_empty() {
                return (*claim, Finding::NotChecked(missing));
            }
            let (mut checked, mut failures) = (0, Vec::new());
            for row in rows.iter().filter(|r| (claim.applies)(r.ber)) {
                let goodputs: Option<Vec<f64>> = claim
                    .schemes
                    .iter()
                    .map(|s| cell(grid, row, s).map(|c| c.goodput_bytes_per_s))
                    .collect();
                let Some(goodputs) = goodputs else { continue };
                checked += 1;
                if let Some(v) = (claim.violation)(row, &goodputs) {
                    failures.push(format!(
                        "{} kbit/s {} BER {}: {v}",
                        row.bandwidth_kbps, row.tcp, row.ber_text
                    ));
                }
            }
            let verdict = if failures.is_empty() {
                Finding::Holds(checked)
            } else {
                Finding::Fails(failures)
            };
            (*claim, verdict)
        })
        .collect()
}

impl Checked for (Claim, Finding) {
    fn verdict(&self) -> Verdict {
        match self.1 {
            Finding::Holds(_) => Verdict::Holds,
            Finding::Fails(_) => Verdict::Fails,
            Finding::NotChecked(_) => Verdict::NotChecked,
        }
    }
}

/// The claims' report: one line per claim (holds, FAILS, claim not checked), then the rows of
/// each failure.
pub fn report(checks: &[(Claim, Finding)]) -> String {
    let mut out = String::from("The draft's qualitative claims on our grid:\n");
    for (claim, verdict) in checks {
        let _ = match verdict {
            Finding::Holds(rows) => {
                writeln!(out, "  holds              {} ({rows} rows)", claim.text)
            }
            Finding::Fails(lines) => {
                let _ = writeln!(
                    out,
                    "  FAILS              {} ({} rows):",
                    claim.text,
                    lines.len()
                );
                lines
                    .iter()
                    .try_for_each(|l| writeln!(out, "                       {l}"))
            }
            Finding::NotChecked(missing) => writeln!(
                out,
                "  claim not checked  {} ({} not run; --schemes)",
                claim.text,
                missing.join(", ")
            ),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::runs::tests::grid_of;
    use super::*;
    use crate::studies::any_fails;

    #[test]
    fn claims_hold_fail_or_are_not_checked() {
        // The draft's own numbers satisfy its claims.
        let draft = grid_of(&["none", "vj", "iphc", "taroc", "ideal"], |r, s| {
            r.draft(s).unwrap()
        });
        let checks = check(&draft);
        assert!(
            checks
                .iter()
                .all(|(_, v)| matches!(v, Finding::Holds(n) if *n > 0)),
            "{checks:?}"
        );
        assert!(!any_fails(&checks));
        // Without vj and iphc, their claims are not checked (and said so); a TAROC worse than
        // NONE fails its claims, row by row.
        let grid = grid_of(&["none", "taroc", "ideal"], |r, s| match s {
            "taroc" => r.draft("none").unwrap() * 0.5,
            _ => r.draft(s).unwrap(),
        });
        let checks = check(&grid);
        assert_eq!(checks[0].1, Finding::NotChecked(vec!["vj"]));
        assert_eq!(checks[1].1, Finding::NotChecked(vec!["iphc"]));
        assert!(matches!(&checks[2].1, Finding::Fails(rows) if rows.len() > 10));
        assert!(any_fails(&checks));
        let text = report(&checks);
        assert!(
            text.contains("claim not checked  VJHC below NONE"),
            "{text}"
        );
        assert!(text.contains("(vj not run; --schemes)"), "{text}");
        assert!(
            text.contains("FAILS              TAROC above NONE"),
            "{text}"
        );
        assert!(text.contains("9.6 kbit/s sack BER 1e-5: TAROC"), "{text}");
    }
}
