//! `taroc reproduce`: the Appendix B grid, its table, the draft's claims checked, and the CSV,
//! JSON and plots written to `--out`, checked writable before the run.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::study::{write_json_lines, StudyOutput};
use super::{scheme_names, Exit, PNG_SCALE};
use crate::plot::PngRenderer;
use crate::progress::Progress;
use crate::reproduce::{self, GridOptions};
use crate::scenario::Scenario;
use crate::studies::tracking;

const REPRODUCE_ABOUT: &str = "\
Reproduce the TAROC draft's Appendix B: the 36 rows the draft tabulates (384 kbit/s Tahoe, \
114 kbit/s Sack, 64 kbit/s Reno, 9.6 kbit/s Sack; nine BERs each, with the draft's MTU) for \
NONE, VJHC, IPHC, TAROC and IDEAL (or the schemes of --schemes), several seeds each, on all \
cores. Prints our goodput beside the draft's, with each one's ratio to IDEAL, and checks the \
draft's qualitative claims (each one holds, FAILS, or is not checked when its schemes did not \
run; --check makes a failed claim an exit status of 1). Writes CSV, JSON, one goodput-vs-BER \
plot per table (every scheme that ran; error bars: the lowest and highest of the per-seed \
goodputs) and the slides' cwnd-tracking plot (9.6 kbit/s, BER 1e-5, MTU 296, SACK, TAROC; each \
as SVG and PNG, see --no-png) into --out, which is checked writable before the run; the table \
is printed even if writing fails. --quick: 3 seeds of 1000 s (the README's main-job command); \
default: 5 seeds of 1000 s. With --json, prints JSON Lines: one object per cell per line \
(bandwidth_kbps, tcp, ber, mtu, scheme, goodput_bytes_per_s = mean over seeds, seeds, \
per_seed, ...). A progress bar shows on standard error (a terminal) after a second.";

/// The help of `taroc reproduce --schemes`, listing every scheme from the code.
fn schemes_help() -> String {
    format!(
        "Schemes to run, comma-separated, each once [default: none,vj,iphc,taroc,ideal]; any of \
         {}, ideal and ideal-N (an IDEAL with an N-byte header, e.g. ideal-7). Schemes without a \
         column in the draft get one of their own (ours and ours÷IDEAL; run ideal too for the \
         ratio) and a line in every plot",
        scheme_names()
    )
}

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
    /// Schemes to run (see `--help` for the list).
    #[arg(long, value_name = "LIST", value_delimiter = ',', help = schemes_help())]
    pub schemes: Option<Vec<String>>,
    /// Threads, output form, claims check and output directory.
    #[command(flatten)]
    pub output: StudyOutput,
}

impl ReproduceArgs {
    /// The grid these arguments ask for, checked (an error is a usage error).
    pub fn options(&self) -> Result<GridOptions, String> {
        let mut options = if self.quick {
            GridOptions::quick()
        } else {
            GridOptions::full()
        };
        if let Some(s) = self.seeds {
            options.seeds = s;
        }
        if let Some(d) = self.duration {
            options.duration_s = d;
        }
        options.threads = self.output.threads;
        if let Some(schemes) = &self.schemes {
            options.schemes = schemes.iter().map(|s| s.trim().to_string()).collect();
        }
        options.check()?;
        Ok(options)
    }
}

/// Makes `dir` if needed and checks a file can be written in it (then removes the file).
fn check_writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".taroc-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Checks a study's options and its `--out` directory before anything runs: the options, or
/// the exit status after a one-line error on `err` naming `command` (a bad option is a usage
/// error, an unwritable directory a failure).
pub(super) fn prepare<T>(
    command: &str,
    options: Result<T, String>,
    dir: &Path,
    err: &mut dyn Write,
) -> Result<T, Exit> {
    let options = options.map_err(|e| {
        let _ = writeln!(err, "{command}: {e}");
        Exit::Usage
    })?;
    check_writable(dir).map_err(|e| {
        let _ = writeln!(
            err,
            "{command}: --out {}: cannot write there: {e}",
            dir.display()
        );
        Exit::Failure
    })?;
    Ok(options)
}

/// Writes `NAME.png` beside each `NAME.svg` of `plots` in `dir`.
pub(super) fn write_pngs(plots: &[(String, String)], dir: &Path) -> Result<(), String> {
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

/// Writes the CSV, the JSON and the SVG plots into `dir`.
fn write_files(
    dir: &Path,
    grid: &reproduce::Grid,
    plots: &[(String, String)],
) -> Result<(), String> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write("appendix-b.csv", reproduce::csv(grid).as_bytes())?;
    let json = serde_json::to_string_pretty(grid).map_err(|e| format!("JSON: {e}"))?;
    write("appendix-b.json", json.as_bytes())?;
    plots
        .iter()
        .try_for_each(|(name, svg)| write(name, svg.as_bytes()))
}

/// Runs `taroc reproduce`: the table (or JSON Lines) and the claims to `out`, errors to `err`,
/// a progress bar on standard error (if `progress` and it is a terminal) after a second.
pub fn run_reproduce(
    args: &ReproduceArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    let options = match prepare("taroc reproduce", args.options(), &args.output.out, err) {
        Ok(o) => o,
        Err(exit) => return exit,
    };
    // The grid's runs, then the cwnd-tracking run (counted as one).
    let bar = Progress::new(options.runs() as u64 + 1, "runs", progress);
    let grid = reproduce::run(&options, &|done, _| bar.set(done as u64));
    let grid = match grid {
        Ok(g) => g,
        Err(e) => {
            bar.finish();
            let _ = writeln!(err, "taroc reproduce: {e}");
            return Exit::Failure;
        }
    };
    let mut plots = reproduce::plots(&grid);
    // The slides' congestion-window tracking case, seed 1, first 300 s plotted.
    let scenario = Scenario {
        duration_s: options.duration_s,
        ..tracking::slides_case()
    };
    let tracked = tracking::run(&scenario, 300.0, &mut |_| {});
    bar.finish();
    match tracked {
        Ok(tracked) => plots.push((
            "cwnd-tracking.svg".into(),
            tracking::svg(&scenario, &tracked, Some(300.0)),
        )),
        Err(e) => {
            let _ = writeln!(err, "taroc reproduce: cwnd-tracking run: {e}");
            return Exit::Failure;
        }
    }
    let checks = reproduce::check(&grid);
    // The results first, so that they are seen even if the files cannot be written.
    let printed = if args.output.json {
        write_json_lines(out, &grid.cells)
    } else {
        let events: u64 = grid.cells.iter().map(|c| c.events).sum();
        let cpu: f64 = grid.cells.iter().map(|c| c.wall_s).sum();
        let runs: usize = grid.cells.iter().map(|c| c.seeds as usize).sum();
        write!(
            out,
            "{}\n{runs} runs, {events} events in {:.1} s wall on {} threads ({:.2} M events/s per \
             core, {:.3} s per run on average)\n{}",
            reproduce::table(&grid),
            grid.wall_s,
            grid.threads,
            events as f64 / cpu.max(1e-9) / 1e6,
            cpu / runs.max(1) as f64,
            reproduce::report(&checks)
        )
    };
    let mut exit = match printed {
        Ok(()) => Exit::Success,
        Err(e) => super::output_failed("taroc reproduce", &e, err),
    };
    let written = write_files(&args.output.out, &grid, &plots).and_then(|()| {
        if args.output.no_png {
            Ok(())
        } else {
            write_pngs(&plots, &args.output.out).map_err(|e| {
                format!("PNG plots: {e} (the CSV, JSON and SVG plots are written; --no-png skips the PNGs)")
            })
        }
    });
    match written {
        Ok(()) if !args.output.json && exit == Exit::Success => {
            let said = writeln!(
                out,
                "CSV, JSON, goodput-vs-BER plots and the cwnd-tracking plot ({}) in {}",
                if args.output.no_png {
                    "SVG"
                } else {
                    "SVG and PNG"
                },
                args.output.out.display()
            );
            if let Err(e) = said.and_then(|()| out.flush()) {
                exit = super::output_failed("taroc reproduce", &e, err);
            }
        }
        Ok(()) => {}
        Err(e) => {
            let _ = writeln!(err, "taroc reproduce: {e}");
            exit = Exit::Failure;
        }
    }
    if args.output.check && reproduce::any_fails(&checks) {
        let failed = checks
            .iter()
            .filter(|(_, v)| matches!(v, reproduce::Verdict::Fails(_)))
            .count();
        if args.output.json {
            let _ = write!(err, "{}", reproduce::report(&checks));
        }
        let _ = writeln!(
            err,
            "taroc reproduce: --check: {failed} of the draft's claims fail on our grid"
        );
        exit = Exit::Failure;
    }
    exit
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

    fn args(out: &Path) -> ReproduceArgs {
        ReproduceArgs {
            quick: false,
            seeds: Some(1),
            duration: Some(2.0),
            schemes: Some(vec!["none".into(), "vj".into()]),
            output: StudyOutput {
                threads: 2,
                json: false,
                check: false,
                out: out.to_path_buf(),
                no_png: true,
            },
        }
    }

    #[test]
    fn bad_options_are_usage_errors() {
        let dir = std::env::temp_dir().join(format!("taroc-repro-usage-{}", std::process::id()));
        for change in [
            (|a: &mut ReproduceArgs| a.seeds = Some(0)) as fn(&mut ReproduceArgs),
            |a| a.duration = Some(-1.0),
            |a| a.schemes = Some(vec!["taroc".into(), "taroc".into()]),
            |a| a.schemes = Some(vec!["zip".into()]),
        ] {
            let mut a = args(&dir);
            change(&mut a);
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(run_reproduce(&a, &mut out, &mut err, false), Exit::Usage);
            let err = String::from_utf8(err).unwrap();
            assert!(
                err.starts_with("taroc reproduce: ") && err.lines().count() == 1,
                "{err}"
            );
        }
        assert!(!dir.exists(), "nothing is written on a usage error");
        for name in taroc_core::variant::NAMES
            .iter()
            .chain(taroc_core::variant::EXTRA_NAMES.iter())
        {
            assert!(schemes_help().contains(name), "{name}");
        }
    }

    /// An --out that cannot be written is refused before the run; one that fails later still
    /// gets the table printed; --check fails on a failing claim; claims whose schemes did not
    /// run are "not checked".
    #[test]
    fn outputs_and_claims_cannot_mislead() {
        let base = std::env::temp_dir().join(format!("taroc-repro-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        // A regular file where the directory should be: refused up front, nothing run.
        let file = base.join("a-file");
        std::fs::write(&file, "").unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let started = std::time::Instant::now();
        assert_eq!(
            run_reproduce(&args(&file.join("sub")), &mut out, &mut err, false),
            Exit::Failure
        );
        assert!(started.elapsed().as_secs_f64() < 1.0);
        let text = String::from_utf8(err).unwrap();
        assert!(text.contains("cannot write there"), "{text}");
        assert!(out.is_empty());

        // The directory is writable, but appendix-b.csv is a directory: the run goes on, the
        // table and claims are printed, the write error is reported, the status is 1.
        let dir = base.join("out");
        std::fs::create_dir_all(dir.join("appendix-b.csv")).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            run_reproduce(&args(&dir), &mut out, &mut err, false),
            Exit::Failure
        );
        let (out, err) = (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        );
        assert!(out.starts_with("Goodput, bytes/s"), "{out}");
        assert!(err.contains("appendix-b.csv"), "{err}");
        assert!(out.contains("claim not checked  IPHC below NONE"), "{out}");
        assert!(out.contains("(iphc not run; --schemes)"), "{out}");

        // Over 2 simulated seconds VJ's smaller headers win: its claim fails, and --check says
        // so with status 1 (without --check the run succeeds).
        let dir = base.join("ok");
        let mut a = args(&dir);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run_reproduce(&a, &mut out, &mut err, false), Exit::Success);
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("FAILS              VJHC below NONE"), "{out}");
        assert!(dir.join("appendix-b-9.6k-sack.svg").is_file());
        a.output.check = true;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run_reproduce(&a, &mut out, &mut err, false), Exit::Failure);
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.contains("--check: 1 of the draft's claims fail"),
            "{err}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
