//! ROHC-TCP U-mode measured in the same run: the peer kit's harness (`../shared/peers/rohc-tcp/`,
//! whose `build.sh` prints its path) over the same captures, loss models and seeds.

use std::path::Path;
use std::process::Command;

use super::Model;

/// ROHC-TCP U-mode's damage per 1000 received frames under `model`, pooled over `captures`
/// (paths) and `seeds`: the harness's refused (`decomp_fail`) plus wrong (`mismatch`) frames
/// over its received ones, one `BIN --header --loss P [--burst L] --seed S CAPTURE` each.
pub(super) fn damage_per_1000(
    bin: &Path,
    captures: &[&str],
    model: Model,
    seeds: &[u64],
) -> Result<f64, String> {
    let (mut received, mut damage) = (0u64, 0u64);
    for &seed in seeds {
        for capture in captures {
            let mut command = Command::new(bin);
            command.arg("--header").arg("--loss");
            command.arg(format!("{}", model.loss_percent / 100.0));
            if let Some(burst) = model.burst {
                command.arg("--burst").arg(format!("{burst}"));
            }
            command.arg("--seed").arg(seed.to_string()).arg(capture);
            let output = command
                .output()
                .map_err(|e| format!("{}: {e}", bin.display()))?;
            if !output.status.success() {
                return Err(format!(
                    "{} on {capture}: {}",
                    bin.display(),
                    String::from_utf8_lossy(&output.stderr).trim()
                ));
            }
            let text = String::from_utf8_lossy(&output.stdout);
            let counts = parse(&text).ok_or_else(|| {
                format!(
                    "{} on {capture}: no header and row in its output",
                    bin.display()
                )
            })?;
            received += counts.0;
            damage += counts.1 + counts.2;
        }
    }
    Ok(super::per_1000(damage, received))
}

/// The `received`, `decomp_fail` and `mismatch` columns of the harness's TSV (a header line,
/// then one row).
fn parse(text: &str) -> Option<(u64, u64, u64)> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split('\t').collect();
    let row: Vec<&str> = lines.next()?.split('\t').collect();
    let column = |name: &str| -> Option<u64> {
        let at = header.iter().position(|h| *h == name)?;
        row.get(at)?.parse().ok()
    };
    Some((
        column("received")?,
        column("decomp_fail")?,
        column("mismatch")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn the_harness_row_is_read_by_its_header() {
        let text = "capture\treceived\tdecomp_fail\tmismatch\nx.pcap\t100\t7\t2\n";
        assert_eq!(parse(text), Some((100, 7, 2)));
        assert_eq!(parse("capture\treceived\nx\t1\n"), None);
        assert_eq!(parse(""), None);
    }
}
