//! The published figures the sweep is drawn beside.

use super::Model;

/// ROHC-TCP in U-mode (RFC 6846 as the C ROHC library runs it without feedback): context-damage
/// losses per 1000 intact frames under random link loss, pooled over 13 captures, seeds 1–5, as
/// (loss %, damage per 1000). Provenance: a published measurement with the C ROHC library, the
/// target `taroc-plus` was designed against; measure it yourself with the peer kit
/// (`../shared/peers/rohc-tcp/`) for a figure of the same run.
pub(super) const ROHC_TCP_U_MODE: [(f64, f64); 6] = [
    (1.0, 0.0),
    (5.0, 1.83),
    (10.0, 1.80),
    (20.0, 21.2),
    (30.0, 105.6),
    (50.0, 690.0),
];

/// The design goal of `taroc-plus`: at most this share of ROHC-TCP's damage at 10, 20, 30 and 50 % loss.
pub(super) const GOAL_SHARE: f64 = 0.01;

/// The published ROHC-TCP figure for `model`, if there is one (random loss only).
pub(super) fn rohc_reference(model: Model) -> Option<f64> {
    if model.burst.is_some() {
        return None;
    }
    ROHC_TCP_U_MODE
        .iter()
        .find(|(loss, _)| (loss - model.loss_percent).abs() < 1e-9)
        .map(|&(_, damage)| damage)
}
