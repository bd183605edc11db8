//! `taroc reproduce decoupling`: Wang & Kung's suites 1 and 2, the fairness cases and the
//! decoupling socket with each header-compression codec, on the simulator; a table (or JSON
//! lines) on standard output, and with `--out` the records and plots beside the paper's points.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::study::write_json_lines;
use super::Exit;
use crate::decoupling::study::{self, Effort, Record};
use crate::plot::{self, Axis, Marker, Panel, PngRenderer, Series};
use crate::progress::Progress;

/// The arguments of `taroc reproduce decoupling`.
#[derive(Debug, Clone, Args)]
pub struct DecouplingArgs {
    /// One seed, 10 simulated seconds per run, fewer BERs and RTTs (about a minute).
    #[arg(long)]
    pub quick: bool,
    /// One JSON record per line instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write records.json and the plots (SVG, PNG) of suites 1 and 2 into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs the study.
pub fn run_decoupling(
    args: &DecouplingArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    let effort = if args.quick {
        Effort::QUICK
    } else {
        Effort::FULL
    };
    if let Some(dir) = &args.out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            let _ = writeln!(
                err,
                "taroc reproduce decoupling: cannot create {}: {e}",
                dir.display()
            );
            return Exit::Failure;
        }
    }
    let plan = study::plan(effort);
    let bar = Progress::new(plan.len() as u64, "runs", progress);
    let mut records = Vec::new();
    for (i, (suite, sender, d)) in plan.iter().enumerate() {
        match study::measure(d, effort, suite, sender) {
            Ok(mut r) => {
                r.bound_bytes_per_s = study::bound(suite, d.link.ber, d.link.rtt_ms);
                records.push(r);
            }
            Err(e) => {
                let _ = writeln!(err, "taroc reproduce decoupling: {e}");
                return Exit::Failure;
            }
        }
        bar.set(i as u64 + 1);
    }
    bar.finish();
    let written = if args.json {
        write_json_lines(out, &records)
    } else {
        print_table(&records, out)
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        return super::output_failed("taroc reproduce decoupling", &e, err);
    }
    if let Some(dir) = &args.out {
        if let Err(e) = write_files(dir, &records) {
            let _ = writeln!(err, "taroc reproduce decoupling: {e}");
            return Exit::Failure;
        }
    }
    Exit::Success
}

fn print_table(records: &[Record], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "suite       sender                        kbit/s  BER      RTT ms  goodput KB/s  bound KB/s  flows KB/s        link   ctl W  hdr loss"
    )?;
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
        writeln!(
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
        )?;
    }
    writeln!(
        out,
        "\nheader packet frame bytes on C-D (52-byte header packets, steady stream):"
    )?;
    for scheme in study::CODECS {
        if let Some(b) = study::header_frame_bytes(scheme) {
            writeln!(out, "  {scheme:<11} {b:.2}")?;
        }
    }
    Ok(())
}

const COLORS: [(&str, &str); 3] = [
    ("reno", "#d62728"),
    ("sack", "#2ca02c"),
    ("decoupling", "#1f77b4"),
];

fn panel(records: &[Record], suite: &str) -> Panel {
    let x_of = |r: &Record| if suite == "1" { r.ber } else { r.rtt_ms };
    let points: Vec<&Record> = records.iter().filter(|r| r.suite == suite).collect();
    let mut series = Vec::new();
    for (sender, color) in COLORS {
        let pts = points
            .iter()
            .filter(|r| r.sender == sender)
            .map(|r| (x_of(r), r.goodput_bytes_per_s / 1e3))
            .collect();
        let mut s = Series::line(sender, color, pts);
        s.marker = Marker::Dot;
        series.push(s);
    }
    let bound = points
        .iter()
        .filter(|r| r.sender == "decoupling")
        .filter_map(|r| r.bound_bytes_per_s.map(|b| (x_of(r), b / 1e3)))
        .collect();
    let mut b = Series::line(
        if suite == "1" {
            "link x (1 - PER)"
        } else {
            "8.3 bound, 1 conn."
        },
        "#555555",
        bound,
    );
    b.dashed = true;
    series.push(b);
    let paper: Vec<(f64, f64)> = if suite == "1" {
        vec![(2e-6, 250.0), (2e-6, 875.0)]
    } else {
        vec![(100.0, 560.0), (100.0, 615.0)]
    };
    let mut p = Series::line("paper's quoted points", "#000000", paper);
    p.marker = Marker::Square;
    p.width = 0.0;
    series.push(p);
    let (title, x) = if suite == "1" {
        (
            "Suite 1: aggregate goodput of two connections vs BER (RTT 10 ms)",
            Axis::log("BER on C-D", 5e-8, 2e-5),
        )
    } else {
        (
            "Suite 2: aggregate goodput of two connections vs RTT (BER 2e-6)",
            Axis::linear("RTT, ms", 0.0, 210.0),
        )
    };
    Panel {
        title: title.into(),
        x,
        y: Axis::linear("goodput, KB/s", 0.0, 1300.0),
        series,
        notes: vec![
            "paper's points: suite 1 Reno 250 KB/s and decoupling 3.5x at 2e-6; suite 2 decoupling 560 and bound 615 KB/s at 100 ms".into(),
        ],
    }
}

fn write_files(dir: &Path, records: &[Record]) -> Result<(), String> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let mut json = Vec::new();
    write_json_lines(&mut json, records).map_err(|e| format!("records.json: {e}"))?;
    write("records.json", &json)?;
    let renderer = PngRenderer::new()?;
    for suite in ["1", "2"] {
        let svg = plot::svg(
            "TCP decoupling (Wang & Kung) on the simulator",
            &[panel(records, suite)],
        );
        let name = format!("decoupling-suite{suite}");
        write(&format!("{name}.svg"), svg.as_bytes())?;
        let png = renderer
            .render(&svg, 1.5)
            .map_err(|e| format!("{name}: {e}"))?;
        write(&format!("{name}.png"), &png)?;
    }
    Ok(())
}
