//! The speed ratio: each scheme's compress + decompress time per packet and its ratio to
//! VJ's in the same run, per capture, measured as `taroc eval --timing` does (every codec call
//! timed with `Instant`, minus one clock read; each scheme run alone over the capture, RUNS
//! times; the median of the runs).
//!
//! ```sh
//! cargo run --release -p taroc-cli --example speed -- [--schemes vj,iphc,taroc,taroc-plus] \
//!     [--runs 5] [--json] [CAPTURE_OR_DIR]...   # default: ../shared/captures/linux
//! ```
//!
//! VJ is always run (added if not listed): it is the reference, the floor of what a header
//! compressor costs. The design goal of `taroc-plus` is at most 3× VJ's time. Run it on an
//! otherwise idle machine, pinned to one core (`taskset -c 1`): other processes on the same
//! cores lengthen every figure.
//!
//! ROHC-TCP (the C ROHC library, U-mode) is timed too when its peer kit's harness is built
//! (`../shared/peers/rohc-tcp/build.sh`; found at `--rohc PATH`, `$ROHC_BENCH`, or the kit's
//! default `$TMPDIR/rohc-tcp-peer/bin/rohc_bench`): on each capture right after our schemes, by
//! the same per-call method, `--runs` times (the median). Each scheme's row then gives ROHC-TCP's
//! time over its own: how many times ROHC-TCP's packet rate it runs at. Without the harness the
//! column says `-` and a note says why; nothing of the product depends on it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use serde::Serialize;
use taroc_cli::capture::CaptureReader;
use taroc_cli::eval::{evaluate, Options, SchemeResult};
use taroc_cli::timing::{measure, Timing};
use taroc_core::Variant;

/// The speed goal of `taroc-plus`: compress + decompress in at most this many times VJ's time.
const GOAL_RATIO: f64 = 3.0;

/// Compress + decompress time per packet of each scheme, and its ratio to VJ's.
#[derive(Debug, Parser)]
#[command(name = "speed")]
struct Args {
    /// Schemes, comma-separated (VJ is added if missing).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "vj,iphc,taroc,taroc-plus",
        value_parser = Variant::parse
    )]
    schemes: Vec<Variant>,
    /// Timed runs per scheme and capture (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: u32,
    /// One JSON object per capture and scheme instead of the table.
    #[arg(long)]
    json: bool,
    /// The peer kit's `rohc_bench` [default: $ROHC_BENCH, else $TMPDIR/rohc-tcp-peer/bin/rohc_bench
    /// if built].
    #[arg(long, value_name = "PATH")]
    rohc: Option<PathBuf>,
    /// Capture files or directories (their `.pcap`/`.pcapng` files, not recursively)
    /// [default: ../shared/captures/linux, or $TAROC_SHARED_CAPTURES/linux].
    captures: Vec<PathBuf>,
}

/// One scheme on one capture.
#[derive(Debug, Serialize)]
struct Row {
    capture: String,
    scheme: String,
    packets: u64,
    compress_ns: f64,
    decompress_ns: f64,
    total_ns: f64,
    /// `total_ns` over VJ's `total_ns` on the same capture in the same run.
    ratio_to_vj: f64,
    /// ROHC-TCP's compress + decompress ns per packet on the same capture (median of `--runs`
    /// runs right after ours), if its harness is built.
    rohc_total_ns: Option<f64>,
    /// `rohc_total_ns` over `total_ns`: this scheme's packet rate in multiples of ROHC-TCP's.
    times_rohc: Option<f64>,
    timing: Timing,
}

/// Where the peer kit's harness is: `--rohc`, `$ROHC_BENCH`, or the kit's default build path.
fn rohc_harness(given: Option<&PathBuf>) -> Option<PathBuf> {
    given
        .cloned()
        .or_else(|| std::env::var_os("ROHC_BENCH").map(PathBuf::from))
        .or_else(|| Some(std::env::temp_dir().join("rohc-tcp-peer/bin/rohc_bench")))
        .filter(|p| p.is_file())
}

/// ROHC-TCP's compress + decompress ns per packet on `capture` by the per-call method: the
/// medians of `runs` runs of the peer harness's `--speed`.
fn rohc_total_ns(harness: &Path, capture: &Path, runs: u32) -> Result<f64, String> {
    let output = std::process::Command::new(harness)
        .args(["--speed", "--runs", &runs.to_string(), "--min-cpu", "0.2"])
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
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let (Some(header), Some(values)) = (lines.next(), lines.next()) else {
        return Err(format!("{}: no speed row", harness.display()));
    };
    let field = |name: &str| -> Result<f64, String> {
        let at = header
            .split('\t')
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name} in the harness's output"))?;
        values
            .split('\t')
            .nth(at)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no value of {name} in the harness's output"))
    };
    Ok(field("call_comp_ns_med")? + field("call_decomp_ns_med")?)
}

fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries =
                std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut found: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// Each scheme of `variants` run alone over `bytes`, once.
fn each_alone(name: &str, bytes: &[u8], variants: &[Variant]) -> Result<Vec<SchemeResult>, String> {
    let mut results = Vec::with_capacity(variants.len());
    for variant in variants {
        let mut reader = CaptureReader::new(name, bytes).map_err(|e| e.to_string())?;
        results.extend(evaluate(
            &mut reader,
            std::slice::from_ref(variant),
            &Options::default(),
            |_| {},
        )?);
    }
    Ok(results)
}

/// The rows of one capture: `runs` timed runs of every scheme.
fn time_capture(
    path: &Path,
    variants: &[Variant],
    runs: u32,
    rohc: Option<&Path>,
) -> Result<Vec<Row>, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let first = each_alone(&name, &bytes, variants)?;
    let timings = measure(runs, |_| each_alone(&name, &bytes, variants))?;
    let rohc = rohc
        .map(|harness| rohc_total_ns(harness, path, runs))
        .transpose()?;
    let total = |t: &Timing| t.compress_ns_per_packet.median + t.decompress_ns_per_packet.median;
    let vj = variants
        .iter()
        .position(|v| v.name == "vj")
        .map_or(f64::NAN, |i| total(&timings[i]));
    Ok(first
        .iter()
        .zip(timings)
        .map(|(r, timing)| Row {
            capture: name.clone(),
            scheme: r.scheme.clone(),
            packets: r.packets,
            compress_ns: timing.compress_ns_per_packet.median,
            decompress_ns: timing.decompress_ns_per_packet.median,
            total_ns: total(&timing),
            ratio_to_vj: total(&timing) / vj,
            rohc_total_ns: rohc,
            times_rohc: rohc.map(|r| r / total(&timing)),
            timing,
        })
        .collect())
}

fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<28} {:<12} {:>7} {:>9} {:>9} {:>9} {:>7} {:>7} {:>9} {:>7}\n",
        "capture",
        "scheme",
        "packets",
        "comp ns",
        "decomp ns",
        "total ns",
        "x VJ",
        "goal",
        "ROHC ns",
        "x ROHC"
    );
    for r in rows {
        let capture = Path::new(&r.capture)
            .file_name()
            .map_or(r.capture.clone(), |f| f.to_string_lossy().into_owned());
        let goal = if r.ratio_to_vj <= GOAL_RATIO {
            "met"
        } else {
            "missed"
        };
        out += &format!(
            "{:<28} {:<12} {:>7} {:>9.1} {:>9.1} {:>9.1} {:>7.2} {:>7} {:>9} {:>7}\n",
            capture,
            r.scheme,
            r.packets,
            r.compress_ns,
            r.decompress_ns,
            r.total_ns,
            r.ratio_to_vj,
            goal,
            r.rohc_total_ns.map_or("-".into(), |n| format!("{n:.1}")),
            r.times_rohc.map_or("-".into(), |x| format!("{x:.2}")),
        );
    }
    out
}

fn run(args: Args) -> Result<(), String> {
    let mut variants = args.schemes.clone();
    if !variants.iter().any(|v| v.name == "vj") {
        variants.insert(0, Variant::parse("vj")?);
    }
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let roots = if args.captures.is_empty() {
        let shared = std::env::var_os("TAROC_SHARED_CAPTURES")
            .map_or_else(|| PathBuf::from("../shared/captures"), PathBuf::from);
        vec![shared.join("linux")]
    } else {
        args.captures.clone()
    };
    let paths = files(&roots)?;
    if paths.is_empty() {
        return Err("no capture found".into());
    }
    if let Some(path) = args.rohc.as_ref().filter(|p| !p.is_file()) {
        return Err(format!("--rohc {}: no such file", path.display()));
    }
    let rohc = rohc_harness(args.rohc.as_ref());
    match &rohc {
        Some(path) => eprintln!("speed: ROHC-TCP timed with {}", path.display()),
        None => eprintln!(
            "speed: note: ROHC-TCP not timed (its harness is not built: \
             ../shared/peers/rohc-tcp/build.sh, then --rohc PATH or $ROHC_BENCH)"
        ),
    }
    let mut rows = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        eprintln!("speed: [{}/{}] {}", i + 1, paths.len(), path.display());
        rows.extend(time_capture(path, &variants, args.runs, rohc.as_deref())?);
    }
    if args.json {
        for row in &rows {
            println!("{}", serde_json::to_string(row).map_err(|e| e.to_string())?);
        }
    } else {
        print!("{}", table(&rows));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("speed: {e}");
            ExitCode::FAILURE
        }
    }
}
