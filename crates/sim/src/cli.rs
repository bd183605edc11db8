//! The `taroc sim` and `taroc reproduce` subcommands: clap arguments and runners, so the CLI
//! crate only adds an enum variant and a dispatch arm.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::link::ErrorModel;
use crate::plot::PngRenderer;
use crate::reproduce::{self, GridOptions};
use crate::scenario::{builtin, default_sim, Scenario, BUILTINS};
use crate::tcp::sender::TcpVariant;
use crate::tracking;

const SIM_ABOUT: &str = "\
Run one scenario of the TAROC draft's Appendix B topology: fixed host -8 Mbit/s, 100 ms- router \
(queue 6) -wireless link- mobile host, one bulk TCP transfer from the fixed host to the mobile \
host. The real codecs compress the data at the router and the ACKs at the mobile host; every \
frame pays one byte of frame kind on the wireless link; a frame with any bit error is dropped; \
the receiving TCP verifies every checksum. Prints goodput (application bytes delivered in order \
per simulated second) and counters. Deterministic: one seed gives one result, bit for bit.";

/// The arguments of `taroc sim`.
#[derive(Debug, Clone, Args)]
#[command(long_about = SIM_ABOUT)]
pub struct SimArgs {
    /// Start from a scenario file (TOML; see --print-scenario) or a built-in: default,
    /// slides-cwnd, appendix-b-KBPS-BER (a row of the draft's tables, e.g. appendix-b-9.6-1e-5).
    /// The flags below override its fields.
    #[arg(long, value_name = "FILE.toml|NAME")]
    pub scenario: Option<String>,
    /// Print the scenario (after the flags) as TOML, a starting point to edit, and exit.
    #[arg(long)]
    pub print_scenario: bool,
    /// Header compression on the wireless link: none, vj, iphc (draft's: header requests, no
    /// twice), iphc-twice, taroc, taroc-plus (our improved profile), or ideal (simulator-only
    /// 4-byte header that never fails)
    /// [default: taroc].
    #[arg(long)]
    pub scheme: Option<String>,
    /// Wireless bandwidth, kbit/s [default: 384].
    #[arg(long)]
    pub bandwidth_kbps: Option<f64>,
    /// Bit error rate on the wireless link (both directions) [default: 1e-7].
    #[arg(long)]
    pub ber: Option<f64>,
    /// IP MTU on the wireless link, bytes [default: 576].
    #[arg(long)]
    pub mtu: Option<usize>,
    /// TCP sender: tahoe, reno, newreno, sack [default: tahoe].
    #[arg(long)]
    pub tcp: Option<TcpVariant>,
    /// Simulated seconds [default: 1000].
    #[arg(long)]
    pub duration: Option<f64>,
    /// Random seed [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Maximum TCP window, segments (NS-2's default 20).
    #[arg(long)]
    pub window: Option<u32>,
    /// Delayed ACKs at the receiver.
    #[arg(long)]
    pub delayed_ack: bool,
    /// TCP timestamps option on every segment.
    #[arg(long)]
    pub timestamps: bool,
    /// IPv6 instead of IPv4.
    #[arg(long)]
    pub ipv6: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the congestion-window tracking plot: the sender's cwnd and ssthresh beside
    /// TAROC's Algorithm SEQ (data stream) and Algorithm ACK (ACK stream) estimates; SVG, or
    /// PNG if FILE ends in .png (drawn with a system font). The slides' case: --scheme taroc
    /// --bandwidth-kbps 9.6 --ber 1e-5 --mtu 296 --tcp sack.
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub cwnd_plot: Option<PathBuf>,
    /// Plot only the first SECONDS of the run (the accuracy figures cover all of it).
    #[arg(long, value_name = "SECONDS")]
    pub plot_window: Option<f64>,
}

const REPRODUCE_ABOUT: &str = "\
Reproduce the TAROC draft's Appendix B: the 36 rows the draft tabulates (384 kbit/s Tahoe, \
114 kbit/s Sack, 64 kbit/s Reno, 9.6 kbit/s Sack; nine BERs each, with the draft's MTU) for \
NONE, VJHC, IPHC, TAROC and IDEAL, several seeds each, on all cores. Prints our goodput beside \
the draft's, with each one's ratio to IDEAL, checks the draft's qualitative claims, and writes \
CSV, JSON, one goodput-vs-BER plot per table and the slides' cwnd-tracking plot (9.6 kbit/s, \
BER 1e-5, MTU 296, SACK, TAROC; each as SVG and PNG, see --no-png) into --out. --quick: 3 seeds of 1000 s (the README's main-job command); default: 5 \
seeds of 1000 s. With --json, prints JSON Lines: one object per cell per line (bandwidth_kbps, \
tcp, ber, mtu, scheme, goodput_bytes_per_s = mean over seeds, seeds, ...).";

/// The arguments of `taroc reproduce`.
#[derive(Debug, Clone, Args)]
#[command(long_about = REPRODUCE_ABOUT)]
pub struct ReproduceArgs {
    /// 3 seeds per cell instead of 5 (1000 s each).
    #[arg(long)]
    pub quick: bool,
    /// Seeds per cell (overrides the default of the mode).
    #[arg(long)]
    pub seeds: Option<u32>,
    /// Simulated seconds per run (overrides the default of the mode).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Schemes to run, comma-separated [default: none,vj,iphc,taroc,ideal]; also iphc-twice
    /// and ideal-N (an IDEAL with an N-byte header, e.g. ideal-7). Schemes without a column in
    /// the draft get one of their own (ours and ours÷IDEAL; run ideal too for the ratio).
    #[arg(long, value_delimiter = ',')]
    pub schemes: Option<Vec<String>>,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print JSON Lines (one object per cell, one per line) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Directory for appendix-b.csv, appendix-b.json and the plots (created if needed).
    #[arg(long, default_value = "sim-results")]
    pub out: PathBuf,
    /// Write the plots as SVG only. By default each plot is also rendered to a PNG beside
    /// its SVG (1800 pixels wide), with a font installed on the system (e.g. Debian's
    /// fonts-dejavu-core).
    #[arg(long)]
    pub no_png: bool,
}

/// The scenario `taroc sim` runs: the file or built-in of `--scenario` (or [`default_sim`]),
/// with the flags' overrides, checked.
pub fn sim_scenario(args: &SimArgs) -> Result<Scenario, String> {
    let mut s = match &args.scenario {
        None => default_sim(),
        Some(name) => match builtin(name) {
            Some(s) => s,
            None => {
                let path = std::path::Path::new(name);
                if !path.exists() {
                    return Err(format!(
                        "{name}: no such file, nor a built-in scenario ({}, appendix-b-KBPS-BER)",
                        BUILTINS.join(", ")
                    ));
                }
                let text = read_scenario_file(path).map_err(|e| format!("{name}: {e}"))?;
                Scenario::from_toml(&text).map_err(|e| format!("{name}: {e}"))?
            }
        },
    };
    if let Some(v) = &args.scheme {
        s.scheme = v.clone();
    }
    if let Some(v) = args.bandwidth_kbps {
        if v.is_nan() || v <= 0.0 || v > 1e9 {
            return Err("bandwidth must be positive".into());
        }
        s.wireless_bps = (v * 1000.0).round() as u64;
    }
    if let Some(ber) = args.ber {
        s.errors = ErrorModel::Ber { ber };
    }
    if let Some(v) = args.mtu {
        s.mtu = v;
    }
    if let Some(v) = args.tcp {
        s.tcp = v;
    }
    if let Some(v) = args.duration {
        s.duration_s = v;
    }
    if let Some(v) = args.seed {
        s.seed = v;
    }
    if let Some(v) = args.window {
        s.max_window_segments = v;
    }
    s.delayed_ack |= args.delayed_ack;
    s.timestamps |= args.timestamps;
    s.ipv6 |= args.ipv6;
    s.validate()?;
    Ok(s)
}

/// The largest scenario file read: real ones are a few hundred bytes.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;

/// Reads a scenario file of at most [`MAX_SCENARIO_BYTES`] (so `/dev/zero` or a huge file is
/// refused instead of filling memory), as UTF-8 text.
fn read_scenario_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(format!(
            "larger than {} KiB: not a scenario file",
            MAX_SCENARIO_BYTES >> 10
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text: not a scenario file".to_string())
}

fn describe(e: &ErrorModel) -> String {
    match *e {
        ErrorModel::None => "no bit errors".into(),
        ErrorModel::Ber { ber } => format!("BER {ber:e}"),
        ErrorModel::GilbertElliott {
            good_ber,
            bad_ber,
            p_good_to_bad,
            p_bad_to_good,
        } => format!(
            "Gilbert-Elliott BER {good_ber:e}/{bad_ber:e} (p {p_good_to_bad}/{p_bad_to_good})"
        ),
        ErrorModel::GilbertElliottTime {
            good_ber,
            bad_ber,
            mean_good_s,
            mean_bad_s,
        } => format!(
            "Gilbert-Elliott BER {good_ber:e}/{bad_ber:e} (mean {mean_good_s} s good, \
             {mean_bad_s} s bad)"
        ),
    }
}

/// One line on the outages of a flow: count and longest, in seconds and packets.
fn outages_line(o: &crate::outage::OutageStats) -> String {
    if o.outages == 0 {
        return "none".into();
    }
    format!(
        "{} (longest {:.3} s{}, most packets {}{})",
        o.outages,
        o.longest_outage_s,
        if o.longest_outage_unended {
            ", still broken at the end"
        } else {
            ""
        },
        o.longest_outage_packets,
        if o.unended_outages > 0 {
            format!("; {} unended", o.unended_outages)
        } else {
            String::new()
        }
    )
}

/// Runs `taroc sim`. Returns false on error (reported on `err`).
pub fn run_sim(args: &SimArgs, out: &mut dyn Write, err: &mut dyn Write) -> bool {
    let scenario = match sim_scenario(args) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(err, "taroc sim: {e}");
            return false;
        }
    };
    if args.print_scenario {
        return write!(out, "{}", scenario.to_toml()).is_ok();
    }
    let outcome = match scenario.run_with(args.cwnd_plot.is_some()) {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(err, "taroc sim: {e}");
            return false;
        }
    };
    if let Some(path) = &args.cwnd_plot {
        let svg = tracking::svg(&scenario, &outcome, args.plot_window);
        let png = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        let bytes = if png {
            match PngRenderer::new().and_then(|r| r.render(&svg, PNG_SCALE)) {
                Ok(b) => b,
                Err(e) => {
                    let _ = writeln!(err, "taroc sim: PNG plot: {e}");
                    return false;
                }
            }
        } else {
            svg.into_bytes()
        };
        if let Err(e) = std::fs::write(path, bytes) {
            let _ = writeln!(err, "taroc sim: cannot write {}: {e}", path.display());
            return false;
        }
    }
    let written = if args.json {
        let mut outcome = outcome.clone();
        // The traces are for the plot, not for the record.
        outcome.cwnd_trace.clear();
        outcome.data_estimates.clear();
        outcome.ack_estimates.clear();
        serde_json::to_string_pretty(&serde_json::json!({
            "scenario": scenario,
            "outcome": outcome,
        }))
        .map_err(std::io::Error::other)
        .and_then(|s| writeln!(out, "{s}"))
    } else {
        writeln!(
            out,
            "{} over {} kbit/s, {}, MTU {}, TCP {}, {} s, seed {}\n\
             goodput            {:.1} bytes/s\n\
             segments sent      {} ({} retransmitted, {} timeouts, {} fast retransmits)\n\
             wireless data link {} frames, {} hit by bit errors, {} dropped by the queue, {} refused by the decompressor\n\
             wireless ACK link  {} frames, {} hit by bit errors, {} refused by the decompressor\n\
             header + framing   {:.2} bytes per data frame, {:.2} per ACK frame; feedback {} frames, {} bytes\n\
             bad checksums      {} at the receiver, {} at the sender\n\
             outages            data flow: {}; ACK flow: {}{}\n\
             events             {} in {:.3} s wall ({:.2} M events/s)",
            scenario.scheme,
            scenario.wireless_bps as f64 / 1000.0,
            describe(&scenario.errors),
            scenario.mtu,
            scenario.tcp,
            scenario.duration_s,
            scenario.seed,
            outcome.goodput_bytes_per_s,
            outcome.sender.segments_sent,
            outcome.sender.retransmissions,
            outcome.sender.timeouts,
            outcome.sender.fast_retransmits,
            outcome.data_link.frames,
            outcome.data_link.corrupted,
            outcome.data_link.queue_drops,
            outcome.data_link.decompressor_drops,
            outcome.ack_link.frames,
            outcome.ack_link.corrupted,
            outcome.ack_link.decompressor_drops,
            outcome.data_link.overhead_per_frame(),
            outcome.ack_link.overhead_per_frame(),
            outcome.data_link.feedback_frames + outcome.ack_link.feedback_frames,
            outcome.data_link.feedback_bytes + outcome.ack_link.feedback_bytes,
            outcome.receiver.bad_checksums,
            outcome.sender.bad_checksums,
            outages_line(&outcome.data_outages),
            outages_line(&outcome.ack_outages),
            scenario
                .decompressor_reset_s
                .map_or(String::new(), |t| format!(" (decompressors reset at {t} s)")),
            outcome.events,
            outcome.wall_s,
            outcome.events as f64 / outcome.wall_s.max(1e-9) / 1e6,
        )
    };
    let tracked = match &args.cwnd_plot {
        Some(path) if !args.json => {
            let seq = tracking::accuracy(&outcome.cwnd_trace, tracking::seq_estimates(&outcome));
            let ack = tracking::accuracy(&outcome.cwnd_trace, tracking::ack_estimates(&outcome));
            let line = |name: &str, a: tracking::Accuracy| format!("{name}: {}\n", a.summary());
            writeln!(
                out,
                "{}{}cwnd tracking plot in {}",
                line("Algorithm SEQ (data stream)", seq),
                line("Algorithm ACK (ACK stream) ", ack),
                path.display()
            )
        }
        _ => Ok(()),
    };
    written.is_ok() && tracked.is_ok()
}

/// PNG pixels per SVG pixel: our plots are 900 SVG pixels wide, so 1800 pixels.
const PNG_SCALE: f32 = 2.0;

/// Writes `NAME.png` beside each `NAME.svg` of `plots` in `dir`.
fn write_pngs(plots: &[(String, String)], dir: &std::path::Path) -> Result<(), String> {
    let renderer = PngRenderer::new()?;
    for (name, svg) in plots {
        let path = dir.join(name).with_extension("png");
        let png = renderer
            .render(svg, PNG_SCALE)
            .map_err(|e| format!("{name}: {e}"))?;
        std::fs::write(&path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs `taroc reproduce`. Returns false on error (reported on `err`).
pub fn run_reproduce(
    args: &ReproduceArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> bool {
    let mut options = if args.quick {
        GridOptions::quick()
    } else {
        GridOptions::full()
    };
    if let Some(s) = args.seeds {
        options.seeds = s;
    }
    if let Some(d) = args.duration {
        if d.is_nan() || d <= 0.0 {
            let _ = writeln!(err, "taroc reproduce: duration must be positive");
            return false;
        }
        options.duration_s = d;
    }
    options.threads = args.threads;
    if let Some(schemes) = &args.schemes {
        options.schemes = schemes.iter().map(|s| s.trim().to_string()).collect();
    }
    let show = |done: usize, total: usize| {
        if progress {
            let width = 40;
            let filled = done * width / total.max(1);
            eprint!(
                "\r[{}{}] {done}/{total} runs",
                "#".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let grid = match reproduce::run(&options, &show) {
        Ok(g) => g,
        Err(e) => {
            let _ = writeln!(err, "taroc reproduce: {e}");
            return false;
        }
    };
    let mut plots = reproduce::plots(&grid);
    // The slides' congestion-window tracking case, seed 1, first 300 s plotted.
    let scenario = Scenario {
        duration_s: options.duration_s,
        ..tracking::slides_case()
    };
    match scenario.run_with(true) {
        Ok(outcome) => plots.push((
            "cwnd-tracking.svg".into(),
            tracking::svg(&scenario, &outcome, Some(300.0)),
        )),
        Err(e) => {
            let _ = writeln!(err, "taroc reproduce: cwnd-tracking run: {e}");
            return false;
        }
    }
    if let Err(e) = std::fs::create_dir_all(&args.out)
        .and_then(|()| std::fs::write(args.out.join("appendix-b.csv"), reproduce::csv(&grid)))
        .and_then(|()| {
            let json = serde_json::to_string_pretty(&grid).map_err(std::io::Error::other)?;
            std::fs::write(args.out.join("appendix-b.json"), json)
        })
        .and_then(|()| {
            plots
                .iter()
                .try_for_each(|(name, svg)| std::fs::write(args.out.join(name), svg))
        })
    {
        let _ = writeln!(
            err,
            "taroc reproduce: cannot write {}: {e}",
            args.out.display()
        );
        return false;
    }
    if !args.no_png {
        if let Err(e) = write_pngs(&plots, &args.out) {
            let _ = writeln!(
                err,
                "taroc reproduce: PNG plots: {e}\n(the table, CSV, JSON and SVG plots are written; \
                 --no-png skips the PNGs)"
            );
            return false;
        }
    }
    let events: u64 = grid.cells.iter().map(|c| c.events).sum();
    let cpu: f64 = grid.cells.iter().map(|c| c.wall_s).sum();
    let runs: usize = grid.cells.iter().map(|c| c.seeds as usize).sum();
    let result = if args.json {
        // JSON Lines: one object per cell, one cell per line.
        grid.cells.iter().try_for_each(|c| {
            serde_json::to_string(c)
                .map_err(std::io::Error::other)
                .and_then(|s| writeln!(out, "{s}"))
        })
    } else {
        let violations = reproduce::shape_violations(&grid);
        let mut text = reproduce::table(&grid);
        text.push_str(&format!(
            "\n{runs} runs, {events} events in {:.1} s wall on {} threads ({:.2} M events/s per core, {:.3} s per run on average)\n",
            grid.wall_s,
            grid.threads,
            events as f64 / cpu.max(1e-9) / 1e6,
            cpu / runs.max(1) as f64
        ));
        if violations.is_empty() {
            text.push_str("The draft's qualitative claims hold on every row.\n");
        } else {
            text.push_str("Where the draft's qualitative claims do not hold:\n");
            for v in violations {
                text.push_str(&format!("  {v}\n"));
            }
        }
        text.push_str(&format!(
            "CSV, JSON, goodput-vs-BER plots and the cwnd-tracking plot ({}) in {}\n",
            if args.no_png { "SVG" } else { "SVG and PNG" },
            args.out.display()
        ));
        write!(out, "{text}")
    };
    result.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use resvg::tiny_skia::Pixmap;

    /// The size an SVG of ours declares, from its root element.
    fn svg_size(svg: &str) -> (f32, f32) {
        let attr = |name: &str| -> f32 {
            let start = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            let len = svg[start..].find('"').unwrap();
            svg[start..start + len].parse().unwrap()
        };
        (attr("width"), attr("height"))
    }

    #[test]
    fn a_png_is_written_beside_every_svg() {
        let dir = std::env::temp_dir().join(format!("taroc-pngs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let panel = crate::plot::Panel {
            title: "panel".into(),
            x: crate::plot::Axis::linear("x", 0.0, 1.0),
            y: crate::plot::Axis::linear("y", 0.0, 1.0),
            series: vec![],
            notes: vec!["a note".into()],
        };
        let one = crate::plot::svg("one", std::slice::from_ref(&panel));
        let two = crate::plot::svg("two", &[panel.clone(), panel]);
        let plots = vec![("one.svg".to_string(), one), ("two.svg".to_string(), two)];
        write_pngs(&plots, &dir).unwrap();
        for (name, svg) in &plots {
            let (w, h) = svg_size(svg);
            let png = std::fs::read(dir.join(name).with_extension("png")).unwrap();
            let image = Pixmap::decode_png(&png).unwrap();
            assert_eq!(
                (image.width(), image.height()),
                ((w * PNG_SCALE).ceil() as u32, (h * PNG_SCALE).ceil() as u32),
                "{name}"
            );
        }
        assert!(write_pngs(&plots, &dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sim_writes_the_cwnd_plot_as_png_by_extension() {
        let path = std::env::temp_dir().join(format!("taroc-cwnd-{}.png", std::process::id()));
        let args = SimArgs {
            scenario: Some("slides-cwnd".into()),
            print_scenario: false,
            scheme: None,
            bandwidth_kbps: None,
            ber: None,
            mtu: None,
            tcp: None,
            duration: Some(20.0),
            seed: None,
            window: None,
            delayed_ack: false,
            timestamps: false,
            ipv6: false,
            json: true,
            cwnd_plot: Some(path.clone()),
            plot_window: None,
        };
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        assert!(
            run_sim(&args, &mut stdout, &mut stderr),
            "{}",
            String::from_utf8_lossy(&stderr)
        );
        let image = Pixmap::decode_png(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(image.width(), 1800);
        std::fs::remove_file(&path).unwrap();
    }

    fn args_for(scenario: &str) -> SimArgs {
        SimArgs {
            scenario: Some(scenario.into()),
            print_scenario: true,
            scheme: None,
            bandwidth_kbps: None,
            ber: None,
            mtu: None,
            tcp: None,
            duration: None,
            seed: None,
            window: None,
            delayed_ack: false,
            timestamps: false,
            ipv6: false,
            json: false,
            cwnd_plot: None,
            plot_window: None,
        }
    }

    #[test]
    fn oversized_endless_or_binary_scenario_files_are_refused() {
        // /dev/zero never ends: it must be refused after the cap, not read until memory runs out.
        let zero = sim_scenario(&args_for("/dev/zero")).unwrap_err();
        assert!(
            zero.starts_with("/dev/zero: larger than 1024 KiB"),
            "{zero}"
        );
        let dir = std::env::temp_dir().join(format!("taroc-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.toml");
        let mut text = "# padding\n".repeat(((MAX_SCENARIO_BYTES as usize) / 10) + 1);
        std::fs::write(&big, &text).unwrap();
        let e = sim_scenario(&args_for(big.to_str().unwrap())).unwrap_err();
        assert!(e.contains("larger than"), "{e}");
        // Exactly at the cap is read: one long comment line, then a setting.
        text = format!(
            "#{}\nmtu = 296\n",
            " ".repeat(MAX_SCENARIO_BYTES as usize - 12)
        );
        assert_eq!(text.len() as u64, MAX_SCENARIO_BYTES);
        std::fs::write(&big, &text).unwrap();
        assert_eq!(
            sim_scenario(&args_for(big.to_str().unwrap())).unwrap().mtu,
            296
        );
        let binary = dir.join("binary.toml");
        std::fs::write(&binary, [0xFF, 0xFE, 0]).unwrap();
        let e = sim_scenario(&args_for(binary.to_str().unwrap())).unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        // The reported panic: a floor above the RTO's ceiling is a one-line error, not exit 101.
        let rto = dir.with_extension("toml");
        std::fs::write(&rto, "min_rto_ms = 120000\n").unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut args = args_for(rto.to_str().unwrap());
        args.print_scenario = false;
        assert!(!run_sim(&args, &mut out, &mut err));
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.starts_with("taroc sim: ")
                && err.contains("min_rto_ms")
                && err.lines().count() == 1,
            "{err}"
        );
        std::fs::remove_file(&rto).unwrap();
    }
}
