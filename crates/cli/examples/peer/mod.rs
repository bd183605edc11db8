//! The peer kit's ROHC harness (`../shared/peers/rohc-tcp/`, whose `build.sh` builds it and
//! prints its path), as the examples that measure against ROHC-TCP run it: one run over one
//! capture, its TSV row read by the header's column names.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::str::FromStr;

/// One row of the harness's output, with its header.
pub struct Row {
    header: Vec<String>,
    values: Vec<String>,
}

/// Runs `harness` with `args` on `capture` and reads the header and the row it prints.
pub fn run<I, S>(harness: &Path, args: I, capture: &Path) -> Result<Row, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let output = Command::new(harness)
        .args(args)
        .arg(capture)
        .output()
        .map_err(|e| format!("{}: {e}", harness.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} on {}: {}",
            harness.display(),
            capture.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Row::parse(&String::from_utf8_lossy(&output.stdout)).ok_or_else(|| {
        format!(
            "{} on {}: no header and row in its output",
            harness.display(),
            capture.display()
        )
    })
}

impl Row {
    /// The first two lines of `text`, tab-separated: the header and the row.
    fn parse(text: &str) -> Option<Row> {
        let mut lines = text.lines();
        let split = |line: &str| line.split('\t').map(str::to_string).collect();
        Some(Row {
            header: split(lines.next()?),
            values: split(lines.next()?),
        })
    }

    /// The value of column `name`.
    pub fn field<T: FromStr>(&self, name: &str) -> Result<T, String> {
        let at = self
            .header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name} in the harness's output"))?;
        self.values
            .get(at)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no value of {name} in the harness's output"))
    }
}

#[cfg(test)]
mod tests {
    use super::Row;

    #[test]
    fn a_harness_row_is_read_by_its_header() {
        let row = Row::parse("capture\treceived\tdecomp_fail\nx.pcap\t100\t7\n").unwrap();
        assert_eq!(row.field::<u64>("received"), Ok(100));
        assert_eq!(row.field::<f64>("decomp_fail"), Ok(7.0));
        assert!(row.field::<u64>("mismatch").is_err());
        assert!(row.field::<u64>("capture").is_err());
        assert!(Row::parse("capture\treceived\n").is_none());
    }
}
