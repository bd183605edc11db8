//! ROHC-TCP U-mode measured in the same run: the peer kit's harness (`../shared/peers/rohc-tcp/`,
//! whose `build.sh` prints its path) over the same captures, loss models and seeds.

use std::path::Path;

use super::{peer, Model};

/// ROHC-TCP U-mode's damage per 1000 received frames under `model`, pooled over `captures`
/// (paths) and `seeds`: the harness's refused (`decomp_fail`) plus wrong (`mismatch`) frames
/// over its received ones, one `BIN --header --loss P [--burst L] --seed S CAPTURE` each.
pub(super) fn damage_per_1000(
    bin: &Path,
    captures: &[&Path],
    model: Model,
    seeds: &[u64],
) -> Result<f64, String> {
    let (mut received, mut damage) = (0u64, 0u64);
    for &seed in seeds {
        for capture in captures {
            let mut args = vec!["--header".to_string(), "--loss".to_string()];
            args.push(format!("{}", model.loss_percent / 100.0));
            if let Some(burst) = model.burst {
                args.extend(["--burst".to_string(), format!("{burst}")]);
            }
            args.extend(["--seed".to_string(), seed.to_string()]);
            let row = peer::run(bin, &args, capture)?;
            received += row.field::<u64>("received")?;
            damage += row.field::<u64>("decomp_fail")? + row.field::<u64>("mismatch")?;
        }
    }
    Ok(super::per_1000(damage, received))
}
