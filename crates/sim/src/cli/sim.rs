//! `taroc sim`: one scenario run, its summary or JSON, and the congestion-window tracking plot.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::output::{output_failed, scheme_names, Exit, PNG_SCALE};
use crate::builtins::{builtin, BUILTINS};
use crate::link::ErrorModel;
use crate::plot::PngRenderer;
use crate::progress::Progress;
use crate::scenario::{default_sim, Scenario};
use crate::studies::tracking;
use crate::tcp::variant::TcpVariant;

/// The help of `taroc sim --scheme`, listing every scheme from the code.
fn sim_scheme_help() -> String {
    format!(
        "Header compression on the wireless link: {}; ideal (the simulator-only 4-byte header \
         that never fails) or ideal-N (an N-byte one). The draft's iphc: header requests, no \
         twice [default: taroc]",
        scheme_names()
    )
}

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
    /// Header compression on the wireless link (see `--help` for the list) [default: taroc].
    #[arg(long, value_name = "NAME", help = sim_scheme_help())]
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

/// The scenario `taroc sim` runs: the file or built-in of `--scenario` (or [`default_sim`]),
/// with the flags' overrides, checked. An unreadable or invalid file is an [`Exit::Failure`];
/// a flag's bad value, an [`Exit::Usage`] error.
pub fn sim_scenario(args: &SimArgs) -> Result<Scenario, (Exit, String)> {
    let failure = |e: String| (Exit::Failure, e);
    let mut s = match &args.scenario {
        None => default_sim(),
        Some(name) => match builtin(name) {
            Some(s) => s,
            None => {
                let path = std::path::Path::new(name);
                if !path.exists() {
                    return Err(failure(format!(
                        "{name}: no such file, nor a built-in scenario ({}, appendix-b-KBPS-BER)",
                        BUILTINS.join(", ")
                    )));
                }
                let text = read_scenario_file(path).map_err(|e| failure(format!("{name}: {e}")))?;
                Scenario::from_toml(&text).map_err(|e| failure(format!("{name}: {e}")))?
            }
        },
    };
    let usage = |e: String| (Exit::Usage, e);
    if let Some(v) = &args.scheme {
        s.scheme = v.clone();
    }
    if let Some(v) = args.bandwidth_kbps {
        if v.is_nan() || v <= 0.0 || v > 1e9 {
            return Err(usage("--bandwidth-kbps must be positive".into()));
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
    if let Some(w) = args.plot_window {
        if !(w > 0.0 && w.is_finite()) {
            return Err(usage(
                "--plot-window must be a positive number of seconds".into(),
            ));
        }
        if args.cwnd_plot.is_none() {
            return Err(usage("--plot-window needs --cwnd-plot FILE".into()));
        }
    }
    // The file (or built-in) was valid: what is wrong now came from the flags.
    s.validate().map_err(usage)?;
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

/// Runs `taroc sim`: results to `out`, errors to `err`, a progress bar on standard error (if
/// `progress` and it is a terminal) for runs longer than a second.
pub fn run_sim(args: &SimArgs, out: &mut dyn Write, err: &mut dyn Write, progress: bool) -> Exit {
    let scenario = match sim_scenario(args) {
        Ok(s) => s,
        Err((exit, e)) => {
            let _ = writeln!(err, "taroc sim: {e}");
            return exit;
        }
    };
    if args.print_scenario {
        return match write!(out, "{}", scenario.to_toml()).and_then(|()| out.flush()) {
            Ok(()) => Exit::Success,
            Err(e) => output_failed("taroc sim", &e, err),
        };
    }
    let bar = Progress::new(scenario.duration_s.ceil() as u64, "simulated s", progress);
    let mut report = |done: f64| bar.set(done.round() as u64);
    let plotted = args
        .cwnd_plot
        .as_ref()
        .map(|_| args.plot_window.unwrap_or(scenario.duration_s));
    let ran = match plotted {
        Some(seconds) => {
            tracking::run(&scenario, seconds, &mut report).map(|t| (t.outcome.clone(), Some(t)))
        }
        None => scenario.run_with(None, &mut report).map(|o| (o, None)),
    };
    bar.finish();
    let (outcome, tracked) = match ran {
        Ok(ran) => ran,
        Err(e) => {
            let _ = writeln!(err, "taroc sim: {e}");
            return Exit::Failure;
        }
    };
    if let (Some(path), Some(tracked)) = (&args.cwnd_plot, &tracked) {
        let svg = tracking::svg(&scenario, tracked, args.plot_window);
        let png = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        let bytes = if png {
            match PngRenderer::new().and_then(|r| r.render(&svg, PNG_SCALE)) {
                Ok(b) => b,
                Err(e) => {
                    let _ = writeln!(err, "taroc sim: PNG plot: {e}");
                    return Exit::Failure;
                }
            }
        } else {
            svg.into_bytes()
        };
        if let Err(e) = std::fs::write(path, bytes) {
            let _ = writeln!(err, "taroc sim: cannot write {}: {e}", path.display());
            return Exit::Failure;
        }
    }
    let written = if args.json {
        sim_json(&scenario, &outcome, tracked.as_ref()).and_then(|s| writeln!(out, "{s}"))
    } else {
        writeln!(out, "{}", summary(&scenario, &outcome))
    };
    let said = match (&args.cwnd_plot, &tracked) {
        (Some(path), Some(t)) if !args.json => {
            let line = |name: &str, a: tracking::Accuracy| format!("{name}: {}\n", a.summary());
            writeln!(
                out,
                "{}{}cwnd tracking plot in {}",
                line("Algorithm SEQ (data stream)", t.seq_accuracy),
                line("Algorithm ACK (ACK stream) ", t.ack_accuracy),
                path.display()
            )
        }
        _ => Ok(()),
    };
    match written.and(said).and_then(|()| out.flush()) {
        Ok(()) => Exit::Success,
        Err(e) => output_failed("taroc sim", &e, err),
    }
}

/// The JSON record of one run: the scenario and its outcome (the traces are for the plot, not
/// for the record), with the tracking accuracy of a traced run.
fn sim_json(
    scenario: &Scenario,
    outcome: &crate::scenario::Outcome,
    tracked: Option<&tracking::Tracked>,
) -> std::io::Result<String> {
    let mut outcome = outcome.clone();
    outcome.cwnd_trace.clear();
    let mut record = serde_json::to_value(&outcome).map_err(std::io::Error::other)?;
    if let (Some(t), Some(fields)) = (tracked, record.as_object_mut()) {
        for (name, accuracy) in [
            ("seq_accuracy", t.seq_accuracy),
            ("ack_accuracy", t.ack_accuracy),
        ] {
            let value = serde_json::to_value(accuracy).map_err(std::io::Error::other)?;
            fields.insert(name.into(), value);
        }
    }
    serde_json::to_string_pretty(&serde_json::json!({
        "scenario": scenario,
        "outcome": record,
    }))
    .map_err(std::io::Error::other)
}

/// The text report of one run.
fn summary(scenario: &Scenario, outcome: &crate::scenario::Outcome) -> String {
    format!(
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::output::tests::{Failing, FULL, GONE};
    use resvg::tiny_skia::Pixmap;
    use taroc_core::variant::{EXTRA_NAMES, NAMES};

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
        assert_eq!(
            run_sim(&args, &mut stdout, &mut stderr, false),
            Exit::Success,
            "{}",
            String::from_utf8_lossy(&stderr)
        );
        let image = Pixmap::decode_png(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(image.width(), 1800);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn results_not_written_fail_with_one_line_or_quietly_for_a_broken_pipe() {
        let mut print = args_for("default");
        let mut run = args_for("default");
        run.print_scenario = false;
        run.duration = Some(5.0);
        for args in [&print, &run] {
            let mut err = Vec::new();
            assert_eq!(
                run_sim(args, &mut Failing(FULL), &mut err, false),
                Exit::Failure
            );
            let err = String::from_utf8(err).unwrap();
            assert_eq!(
                err,
                "taroc sim: cannot write to standard output: No space left on device (os error \
                 28)\n"
            );
            let mut err = Vec::new();
            assert_eq!(
                run_sim(args, &mut Failing(GONE), &mut err, false),
                Exit::Failure
            );
            assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
        }
        print.json = true;
        let mut err = Vec::new();
        assert_eq!(
            run_sim(&print, &mut Failing(FULL), &mut err, false),
            Exit::Failure
        );
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
        let zero = sim_scenario(&args_for("/dev/zero")).unwrap_err().1;
        assert!(
            zero.starts_with("/dev/zero: larger than 1024 KiB"),
            "{zero}"
        );
        let dir = std::env::temp_dir().join(format!("taroc-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.toml");
        let mut text = "# padding\n".repeat(((MAX_SCENARIO_BYTES as usize) / 10) + 1);
        std::fs::write(&big, &text).unwrap();
        let e = sim_scenario(&args_for(big.to_str().unwrap()))
            .unwrap_err()
            .1;
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
        let e = sim_scenario(&args_for(binary.to_str().unwrap()))
            .unwrap_err()
            .1;
        assert!(e.contains("not UTF-8"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        // A floor above the RTO's ceiling is a one-line error, not a panic (exit 101).
        let rto = dir.with_extension("toml");
        std::fs::write(&rto, "min_rto_ms = 120000\n").unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut args = args_for(rto.to_str().unwrap());
        args.print_scenario = false;
        assert_eq!(run_sim(&args, &mut out, &mut err, false), Exit::Failure);
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.starts_with("taroc sim: ")
                && err.contains("min_rto_ms")
                && err.lines().count() == 1,
            "{err}"
        );
        std::fs::remove_file(&rto).unwrap();
    }

    /// An invalid file is a failure (1); a flag's bad value on a valid scenario, a usage error
    /// (2); every scheme of the code is in `--help`.
    #[test]
    fn exit_codes_follow_the_rule_and_help_lists_every_scheme() {
        let mut args = args_for("default");
        args.ber = Some(3.0);
        assert_eq!(sim_scenario(&args).unwrap_err().0, Exit::Usage);
        let mut args = args_for("default");
        args.plot_window = Some(10.0);
        let (exit, e) = sim_scenario(&args).unwrap_err();
        assert_eq!(
            (exit, e.as_str()),
            (Exit::Usage, "--plot-window needs --cwnd-plot FILE")
        );
        assert_eq!(
            sim_scenario(&args_for("no-such-scenario")).unwrap_err().0,
            Exit::Failure
        );
        for name in NAMES.iter().chain(EXTRA_NAMES.iter()) {
            assert!(sim_scheme_help().contains(name), "{name}");
            assert!(crate::scenario::schemes().any(|s| s == *name), "{name}");
        }
        assert_eq!(
            [Exit::Success, Exit::Failure, Exit::Usage].map(Exit::code),
            [0, 1, 2]
        );
    }
}
