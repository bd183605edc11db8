//! The draft's Appendix B numbers (all 36 cells, bytes/s), embedded at compile time from
//! `crates/sim/data/taroc-appendix-b-throughput.csv`, a verbatim copy of
//! `shared/reference/taroc-appendix-b-throughput.csv`.

use crate::tcp::variant::TcpVariant;

/// The embedded CSV.
pub const CSV: &str = include_str!("../../../data/taroc-appendix-b-throughput.csv");

/// The schemes of the draft's tables, in column order, with our names.
pub const DRAFT_SCHEMES: [(&str, &str); 5] = [
    ("NONE", "none"),
    ("VJHC", "vj"),
    ("IPHC", "iphc"),
    ("TAROC", "taroc"),
    ("IDEAL", "ideal"),
];

/// One row of the draft's tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Wireless bandwidth, kbit/s.
    pub bandwidth_kbps: f64,
    /// TCP variant.
    pub tcp: TcpVariant,
    /// The BER as the draft writes it (e.g. "1e-7").
    pub ber_text: String,
    /// The BER.
    pub ber: f64,
    /// The MTU, bytes.
    pub mtu: usize,
    /// Goodput, bytes/s, for NONE, VJHC, IPHC, TAROC, IDEAL.
    pub goodput: [f64; 5],
}

impl Row {
    /// The draft's goodput for one of our scheme names, if the draft has it.
    pub fn draft(&self, scheme: &str) -> Option<f64> {
        DRAFT_SCHEMES
            .iter()
            .position(|(_, ours)| *ours == scheme)
            .map(|i| self.goodput[i])
    }
}

/// Parses the embedded table.
pub fn rows() -> Result<Vec<Row>, String> {
    parse(CSV)
}

/// Parses a table in the reference CSV format.
pub fn parse(csv: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (n, line) in csv.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = |what: &str| format!("reference CSV line {}: bad {what}", n + 1);
        if f.len() != 9 {
            return Err(bad("number of fields"));
        }
        let mut goodput = [0.0; 5];
        for (i, g) in goodput.iter_mut().enumerate() {
            *g = f[4 + i].parse().map_err(|_| bad("goodput"))?;
        }
        rows.push(Row {
            bandwidth_kbps: f[0].parse().map_err(|_| bad("bandwidth"))?,
            tcp: f[1].parse().map_err(|_| bad("TCP variant"))?,
            ber_text: f[2].to_string(),
            ber: f[2].parse().map_err(|_| bad("BER"))?,
            mtu: f[3].parse().map_err(|_| bad("MTU"))?,
            goodput,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_36_cells_parse() {
        let rows = rows().unwrap();
        assert_eq!(rows.len(), 36);
        assert_eq!(rows[0].tcp, TcpVariant::Tahoe);
        assert_eq!(rows[0].draft("taroc"), Some(24732.0));
        assert_eq!(rows[35].mtu, 96);
        assert!(parse("h\n1,2,3").is_err());
    }
}
