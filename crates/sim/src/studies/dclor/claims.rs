//! The draft's claims, checked on the study's results.

use serde::Serialize;

use super::runs::{draft_figures, StudyResult};
use crate::studies::{Checked, Verdict};
use crate::tcp::timeout::ResponseKind;

/// One of the draft's claims and whether our run bears it out (`None`: its responses did not
/// run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// The claim.
    pub claim: String,
    /// Whether it holds.
    pub holds: Option<bool>,
    /// Our numbers behind the verdict.
    pub detail: String,
}

/// Checks the draft's claims on `result`.
pub fn check(result: &StudyResult) -> Vec<Claim> {
    use ResponseKind::{Dclor, Eifel, Frto, Standard};
    let mut claims = Vec::new();
    for kb in [10, 100] {
        let (d, s) = (result.row(kb, Dclor), result.row(kb, Standard));
        let (holds, detail) = match (d, s) {
            (Some(d), Some(s)) => {
                let (lo, hi) = d.summary.difference_ci95(&s.summary);
                (
                    Some(hi < 0.0),
                    format!(
                        "DCLOR {:.3} s, standard {:.3} s, difference 95% CI [{lo:.3}, {hi:.3}] s",
                        d.summary.mean_s, s.summary.mean_s
                    ),
                )
            }
            _ => (None, "not run".into()),
        };
        claims.push(Claim {
            claim: format!("{kb} KB: DCLOR's mean download time is below standard TCP's"),
            holds,
            detail,
        });
    }
    for kb in [5, 10, 100] {
        let order = [Dclor, Eifel, Frto, Standard];
        let se: Option<Vec<f64>> = order
            .iter()
            .map(|&r| result.row(kb, r).map(|x| x.summary.spectral_efficiency))
            .collect();
        claims.push(Claim {
            claim: format!("{kb} KB: spectral efficiency ordered DCLOR < Eifel < F-RTO < standard"),
            holds: se.as_ref().map(|v| v.windows(2).all(|w| w[0] < w[1])),
            detail: se.map_or("not run".into(), |v| {
                format!(
                    "dclor {:.4}, eifel {:.4}, frto {:.4}, standard {:.4}",
                    v[0], v[1], v[2], v[3]
                )
            }),
        });
    }
    for kb in [5, 10] {
        let v: Option<Vec<(ResponseKind, f64)>> = [Dclor, Eifel, Frto, Standard]
            .iter()
            .map(|&r| result.row(kb, r).map(|x| (r, x.summary.variance_s2)))
            .collect();
        claims.push(Claim {
            claim: format!("{kb} KB: Eifel's download-time variance is the largest"),
            holds: v.as_ref().map(|v| {
                let eifel = v[1].1;
                v.iter().all(|&(r, x)| r == Eifel || x < eifel)
            }),
            detail: v.map_or("not run".into(), |v| {
                v.iter()
                    .map(|(r, x)| format!("{r} {x:.3}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
        });
    }
    for kb in [5, 10, 100] {
        let row = result.row(kb, Standard);
        let (holds, detail) = match (row, draft_figures(kb, Standard)) {
            (Some(r), Some((mean, variance, _))) => {
                let dm = r.summary.mean_s / mean - 1.0;
                let dv = r.summary.variance_s2 / variance - 1.0;
                (
                    Some(dm.abs() <= 0.15 && dv.abs() <= 0.35),
                    format!(
                        "mean {:.3} s vs {mean} ({:+.1}%), variance {:.3} s² vs {variance} ({:+.1}%)",
                        r.summary.mean_s,
                        100.0 * dm,
                        r.summary.variance_s2,
                        100.0 * dv
                    ),
                )
            }
            _ => (None, "not run".into()),
        };
        claims.push(Claim {
            claim: format!(
                "{kb} KB: standard TCP's mean within 15% of the draft's, variance within 35%"
            ),
            holds,
            detail,
        });
    }
    claims
}

impl Checked for Claim {
    fn verdict(&self) -> Verdict {
        match self.holds {
            Some(true) => Verdict::Holds,
            Some(false) => Verdict::Fails,
            None => Verdict::NotChecked,
        }
    }
}
