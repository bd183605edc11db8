//! The study's table: one line per point, beside the paper's bound, and what a header packet's
//! frame costs under each codec.

use std::fmt::Write as _;

use super::runs::{header_frame_bytes, Record, CODECS};

/// The table of `records`.
pub fn table(records: &[Record]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "suite       sender                        kbit/s  BER      RTT ms  goodput KB/s  bound KB/s  flows KB/s        link   ctl W  hdr loss"
    );
    for r in records {
        let flows: Vec<String> = r
            .flows_bytes_per_s
            .iter()
            .map(|f| format!("{:.0}", f / 1e3))
            .collect();
        let label = match &r.scheme {
            Some(s) => format!("{} ({s})", r.sender),
            None => r.sender.clone(),
        };
        let _ = writeln!(
            out,
            "{:<11} {:<29} {:>6}  {:<8.1e} {:>6.0}  {:>12.2}  {:>10}  {:<16}  {:>4.0}%  {:>6.1}  {:>7.4}",
            r.suite,
            label,
            r.rate_bps as f64 / 1e3,
            r.ber,
            r.rtt_ms,
            r.goodput_bytes_per_s / 1e3,
            r.bound_bytes_per_s
                .map_or("-".into(), |b| format!("{:.1}", b / 1e3)),
            flows.join("/"),
            r.link_use * 100.0,
            r.control_window,
            r.header_loss
        );
    }
    let _ = writeln!(
        out,
        "\nheader packet frame bytes on C-D (52-byte header packets, steady stream):"
    );
    for scheme in CODECS {
        if let Some(b) = header_frame_bytes(scheme) {
            let _ = writeln!(out, "  {scheme:<11} {b:.2}");
        }
    }
    out
}
