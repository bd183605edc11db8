//! What every study's `taroc reproduce` subcommand shares: the output options, and the one way a
//! study runs from its options to its report and files (`run`); each study adds its words
//! through `Command`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::output::{output_failed, Exit, PNG_SCALE};
use crate::plot::PngRenderer;
use crate::progress::Progress;
use crate::studies::{any_fails, json_lines, Checked, Study, Verdict};

/// The options the simulated studies share: worker threads, the output's form, the claims
/// check and where the files go (flattened into each study's arguments).
#[derive(Debug, Clone, Args)]
pub struct StudyOutput {
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print JSON Lines (one record per line, see above) instead of the table or report.
    #[arg(long)]
    pub json: bool,
    /// Exit with status 1 if any of the study's claims fails (a claim whose schemes did not
    /// run is reported "not checked" and does not fail).
    #[arg(long)]
    pub check: bool,
    /// Directory for the study's CSV, JSON and plots (created if needed; checked writable
    /// before the run).
    #[arg(long, default_value = "sim-results")]
    pub out: PathBuf,
    /// Write the plots as SVG only. By default each plot is also rendered to a PNG beside
    /// its SVG (1800 pixels wide), with a font installed on the system (e.g. Debian's
    /// fonts-dejavu-core).
    #[arg(long)]
    pub no_png: bool,
}

impl StudyOutput {
    /// Where and how the results go.
    pub(super) fn destination(&self) -> Destination {
        Destination {
            json: self.json,
            check: self.check,
            out: Some(self.out.clone()),
            png: !self.no_png,
        }
    }
}

/// Where and how a study's results go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Destination {
    /// JSON Lines on standard output instead of the report.
    pub json: bool,
    /// A failed claim fails the command.
    pub check: bool,
    /// The directory of the files, if any (checked writable before the run).
    pub out: Option<PathBuf>,
    /// Each plot rendered to a PNG beside its SVG.
    pub png: bool,
}

/// A study as its subcommand runs it: what it adds to its results in words. Every method has a
/// default; a study overrides what it says differently.
pub(super) trait Command: Study {
    /// The command, as its messages name it (`taroc reproduce dclor`).
    const NAME: &'static str;
    /// PNG pixels per SVG pixel.
    const PNG_SCALE: f32 = PNG_SCALE;

    /// The line saying where the files went, printed after the report (none by default).
    fn written(dir: &Path, png: bool) -> Option<String> {
        let _ = (dir, png);
        None
    }

    /// What a failed PNG rendering reports (after the command's name).
    fn png_failed(error: String) -> String {
        error
    }

    /// What standard error says when `--check` finds `failed` of `claims` failing (nothing by
    /// default: the exit status says it).
    fn check_failed(failed: usize, claims: &[Self::Claim], json: bool) -> String {
        let _ = (failed, claims, json);
        String::new()
    }
}

/// Runs study `S`: its options checked (a usage error if they are not what `options` says) and
/// its output directory too, its runs (a progress bar on standard error if `progress`), its
/// report or JSON Lines on `out` (first, so that they are seen even if the files cannot be
/// written), its files and plots, and its claims if `--check`.
pub(super) fn run<S: Command>(
    options: Result<S::Options, String>,
    to: &Destination,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: bool,
) -> Exit {
    let options = match prepare(S::NAME, options, to.out.as_deref(), err) {
        Ok(o) => o,
        Err(exit) => return exit,
    };
    let bar = Progress::new(S::runs(&options) as u64, "runs", progress);
    let results = S::run(&options, &|done| bar.set(done as u64));
    bar.finish();
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "{}: {e}", S::NAME);
            return Exit::Failure;
        }
    };
    let claims = S::claims(&results);
    let records = S::records(&results);
    let printed = if to.json {
        json_lines(&records)
            .map_err(std::io::Error::other)
            .and_then(|lines| out.write_all(lines.as_bytes()))
    } else {
        write!(out, "{}", S::report(&results, &claims))
    };
    let mut exit = match printed.and_then(|()| out.flush()) {
        Ok(()) => Exit::Success,
        Err(e) => output_failed(S::NAME, &e, err),
    };
    if let Some(dir) = &to.out {
        match write_files::<S>(dir, &results, &claims, &records, to.png) {
            Ok(()) if !to.json && exit == Exit::Success => {
                if let Some(line) = S::written(dir, to.png) {
                    if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
                        exit = output_failed(S::NAME, &e, err);
                    }
                }
            }
            Ok(()) => {}
            Err(e) => {
                let _ = writeln!(err, "{}: {e}", S::NAME);
                exit = Exit::Failure;
            }
        }
    }
    if to.check && any_fails(&claims) {
        let failed = claims
            .iter()
            .filter(|c| c.verdict() == Verdict::Fails)
            .count();
        let _ = write!(err, "{}", S::check_failed(failed, &claims, to.json));
        exit = Exit::Failure;
    }
    exit
}

/// Makes `dir` if needed and checks a file can be written in it (then removes the file).
fn check_writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".taroc-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Checks a study's options and its output directory before anything runs: the options, or
/// the exit status after a one-line error on `err` naming `command` (a bad option is a usage
/// error, an unwritable directory a failure).
fn prepare<T>(
    command: &str,
    options: Result<T, String>,
    dir: Option<&Path>,
    err: &mut dyn Write,
) -> Result<T, Exit> {
    let options = options.map_err(|e| {
        let _ = writeln!(err, "{command}: {e}");
        Exit::Usage
    })?;
    if let Some(dir) = dir {
        check_writable(dir).map_err(|e| {
            let _ = writeln!(
                err,
                "{command}: --out {}: cannot write there: {e}",
                dir.display()
            );
            Exit::Failure
        })?;
    }
    Ok(options)
}

/// Writes the study's data files, its plots as SVG, and (if `png`) each plot as a PNG beside
/// its SVG, into `dir`.
fn write_files<S: Command>(
    dir: &Path,
    results: &S::Results,
    claims: &[S::Claim],
    records: &[S::Record],
    png: bool,
) -> Result<(), String> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    for (name, bytes) in S::files(results, claims, records)? {
        write(&name, &bytes)?;
    }
    let plots = S::plots(results);
    for (name, svg) in &plots {
        write(name, svg.as_bytes())?;
    }
    if png {
        write_pngs(&plots, dir, S::PNG_SCALE).map_err(S::png_failed)?;
    }
    Ok(())
}

/// Writes `NAME.png` beside each `NAME.svg` of `plots` in `dir`, `scale` PNG pixels per SVG
/// pixel.
pub(super) fn write_pngs(plots: &[(String, String)], dir: &Path, scale: f32) -> Result<(), String> {
    let renderer = PngRenderer::new()?;
    for (name, svg) in plots {
        let path = dir.join(name).with_extension("png");
        let png = renderer
            .render(svg, scale)
            .map_err(|e| format!("{name}: {e}"))?;
        std::fs::write(&path, png).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
