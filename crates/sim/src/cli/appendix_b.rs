//! `taroc reproduce` (or `taroc reproduce appendix-b`): the Appendix B grid, its table, the
//! draft's claims checked, and the CSV, JSON and plots written to `--out`, checked writable
//! before the run.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::output::{scheme_names, Exit};
use super::study::{self, Command, StudyOutput};
use crate::studies::appendix_b::{self, AppendixB, Claim, Finding, GridOptions};

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

impl Command for AppendixB {
    const NAME: &'static str = "taroc reproduce";

    fn written(dir: &Path, png: bool) -> Option<String> {
        Some(format!(
            "CSV, JSON, goodput-vs-BER plots and the cwnd-tracking plot ({}) in {}",
            if png { "SVG and PNG" } else { "SVG" },
            dir.display()
        ))
    }

    fn png_failed(error: String) -> String {
        format!(
            "PNG plots: {error} (the CSV, JSON and SVG plots are written; --no-png skips the PNGs)"
        )
    }

    fn check_failed(failed: usize, claims: &[(Claim, Finding)], json: bool) -> String {
        let report = if json {
            appendix_b::claims::report(claims)
        } else {
            String::new()
        };
        format!(
            "{report}taroc reproduce: --check: {failed} of the draft's claims fail on our grid\n"
        )
    }
}

/// Runs `taroc reproduce`: the table (or JSON Lines) and the claims to `out`, errors to `err`,
/// a progress bar on standard error (if `progress` and it is a terminal) after a second.
pub fn run_reproduce(
    args: &ReproduceArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    let to = args.output.destination();
    study::run::<AppendixB>(args.options(), &to, out, err, progress)
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
        use super::super::output::PNG_SCALE;
        use super::super::study::write_pngs;
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
        write_pngs(&plots, &dir, PNG_SCALE).unwrap();
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
        assert!(write_pngs(&plots, &dir.join("missing"), PNG_SCALE).is_err());
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
