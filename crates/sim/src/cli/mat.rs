//! `taroc mat`: Wang & Kung's analysis (equations 1–3) for one BER, packet size and RTT, or the
//! paper's worked cases beside what the paper states.

use std::io::Write;

use clap::Args;

use super::output::{output_failed, Exit};
use crate::studies::decoupling::mat::{self, Analysis, WORKED_CASES};

/// The arguments of `taroc mat`.
#[derive(Debug, Clone, Args)]
pub struct MatArgs {
    /// Bit-error rate of the link (0 to 1). Without it, the paper's worked cases are printed.
    #[arg(long)]
    pub ber: Option<f64>,
    /// Packet size in bytes used for the PER and the window (52: a header packet).
    #[arg(long, default_value_t = 576.0)]
    pub packet_size: f64,
    /// Round-trip time in seconds.
    #[arg(long, default_value_t = 0.540)]
    pub rtt: f64,
    /// Data packet size in bytes for the throughput (default: the packet size).
    #[arg(long)]
    pub data_size: Option<f64>,
    /// One JSON record per line instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The long help of `taroc mat`.
pub const MAT_ABOUT: &str = "\
Wang & Kung's analysis of how bit errors cap an idealized TCP (no timeouts): equation (1) \
PER = BER*PS*8, equation (2) 1/PER = (3/8)W^2 + 3W/4 solved for the window W in packets, and \
equation (3) MAT = (3/4)*W*PS/RTT + (3/2)*PS/RTT. With --data-size, W comes from --packet-size \
(a 52-byte header packet of the decoupling socket) and MAT from the data packets, and the \
section 8.3 goodput bound (MAT less the data packets' PER and the 52/1500 header overhead) is \
printed too. Without --ber: the paper's worked cases, computed, beside what the paper states \
(some stated values do not follow from its equation (3); see docs/decoupling-interpretations.md).";

/// Runs `taroc mat`.
pub fn run_mat(args: &MatArgs, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let bad = |what: &str, v: f64| !(v.is_finite() && v > 0.0) || (what == "ber" && v > 1.0);
    for (what, v) in [
        ("ber", args.ber.unwrap_or(1e-6)),
        ("packet-size", args.packet_size),
        ("rtt", args.rtt),
        ("data-size", args.data_size.unwrap_or(1.0)),
    ] {
        if bad(what, v) {
            let _ = writeln!(
                err,
                "taroc mat: --{what} must be positive (BER at most 1), got {v}"
            );
            return Exit::Usage;
        }
    }
    let written = match args.ber {
        Some(ber) => print_case(args, ber, out),
        None => print_worked(args.json, out),
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => Exit::Success,
        Err(e) => output_failed("taroc mat", &e, err),
    }
}

fn print_case(args: &MatArgs, ber: f64, out: &mut dyn Write) -> std::io::Result<()> {
    let a = Analysis::of(ber, args.packet_size, args.rtt);
    let data = args.data_size.unwrap_or(args.packet_size);
    let mat = mat::mat_bytes_per_s(a.window, data, args.rtt);
    let bound = args
        .data_size
        .map(|d| mat::decoupling_bound(ber, args.packet_size, d, args.rtt));
    if args.json {
        let record = serde_json::json!({
            "ber": ber, "packet_size": args.packet_size, "rtt_s": args.rtt,
            "per": a.per, "window": a.window, "data_size": data,
            "mat_bytes_per_s": mat, "bound_bytes_per_s": bound,
        });
        return writeln!(out, "{record}");
    }
    writeln!(out, "PER (eq. 1)   {:.6}", a.per)?;
    writeln!(out, "W   (eq. 2)   {:.2} packets", a.window)?;
    writeln!(
        out,
        "MAT (eq. 3)   {:.0} B/s = {:.1} kbit/s ({data} B packets)",
        mat,
        mat * 8.0 / 1e3
    )?;
    if let Some(bound) = bound {
        writeln!(out, "bound (8.3)   {bound:.0} B/s")?;
    }
    Ok(())
}

fn print_worked(json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    for case in WORKED_CASES {
        let a = Analysis::of(case.ber, case.packet_bytes, case.rtt_s);
        let data = if case.section == "8.3" { 1500.0 } else { 576.0 };
        let mat = mat::mat_bytes_per_s(a.window.round(), data, case.rtt_s);
        if json {
            let record = serde_json::json!({
                "section": case.section, "ber": case.ber, "packet_size": case.packet_bytes,
                "rtt_s": case.rtt_s, "per": a.per, "window": a.window,
                "data_size": data, "mat_rounded_w_bytes_per_s": mat, "stated": case.stated,
            });
            writeln!(out, "{record}")?;
        } else {
            writeln!(
                out,
                "section {:<9} BER {:e}, {} B, RTT {} s: PER {:.5}, W {:.2} (rounded {}), \
                 MAT {:.0} B/s = {:.1} kbit/s with {data} B packets\n  the paper states: {}",
                case.section,
                case.ber,
                case.packet_bytes,
                case.rtt_s,
                a.per,
                a.window,
                a.window.round(),
                mat,
                mat * 8.0 / 1e3,
                case.stated
            )?;
        }
    }
    let (headers, acks) = mat::overhead(52.0, 1500.0);
    let bound = mat::decoupling_bound(2e-6, 52.0, 1500.0, 0.1);
    if json {
        let record = serde_json::json!({
            "section": "4.8.3 / 8.3", "header_overhead": headers, "ack_overhead": acks,
            "bound_bytes_per_s": bound,
        });
        writeln!(out, "{record}")
    } else {
        writeln!(
            out,
            "section 4.8.3   overhead: header packets {:.2}%, ACKs {:.2}% (the paper: 3.4% + 1.7%)\n\
             section 8.3     bound at BER 2e-6, RTT 0.1 s: {bound:.0} B/s (the paper: ~615 KB/s)",
            headers * 100.0,
            acks * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: MatArgs) -> (Exit, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = run_mat(&args, &mut out, &mut err);
        (
            exit,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    fn args(ber: Option<f64>) -> MatArgs {
        MatArgs {
            ber,
            packet_size: 52.0,
            rtt: 0.1,
            data_size: Some(1500.0),
            json: false,
        }
    }

    #[test]
    fn one_case_prints_the_window_and_bound() {
        let (exit, out, _) = run(args(Some(2e-6)));
        assert_eq!(exit, Exit::Success);
        assert!(out.contains("W   (eq. 2)   55.62 packets"), "{out}");
        assert!(out.contains("bound (8.3)"), "{out}");
    }

    #[test]
    fn worked_cases_name_the_stated_values() {
        let (exit, out, _) = run(args(None));
        assert_eq!(exit, Exit::Success);
        assert!(out.contains("652500 B/s"), "{out}");
        assert!(out.contains("3.47%"), "{out}");
    }

    #[test]
    fn results_not_written_are_a_failure_with_one_line() {
        use crate::cli::output::tests::{Failing, FULL, GONE};
        for case in [args(None), args(Some(2e-6))] {
            let mut err = Vec::new();
            assert_eq!(run_mat(&case, &mut Failing(FULL), &mut err), Exit::Failure);
            let err = String::from_utf8(err).unwrap();
            assert!(
                err.starts_with("taroc mat: cannot write to standard output: No space left")
                    && err.lines().count() == 1,
                "{err}"
            );
            let mut err = Vec::new();
            assert_eq!(run_mat(&case, &mut Failing(GONE), &mut err), Exit::Failure);
            assert!(err.is_empty());
        }
    }

    #[test]
    fn bad_ber_is_a_usage_error() {
        let (exit, _, err) = run(args(Some(2.0)));
        assert_eq!(exit, Exit::Usage);
        assert_eq!(err.lines().count(), 1);
    }
}
