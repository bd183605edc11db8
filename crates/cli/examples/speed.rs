//! The speed ratio: each scheme's compress + decompress time per packet and its ratio to
//! VJ's in the same run, per capture, by two methods:
//! - *per call*, as `taroc eval --timing` does: every codec call timed with `Instant`, minus
//!   one clock read; each scheme run alone over the capture, RUNS times; the median of the runs;
//! - *loop*, as criterion and the peer harness's `loop_*_pps` do: the capture held in memory,
//!   compressed pass after pass by fresh compressors (one per link direction) until the
//!   thread has run `--min-cpu` seconds, then the frames of one pass decompressed the same
//!   way by fresh decompressors; the thread's CPU time over the packets; the median of RUNS.
//!
//! Beside the schemes, the loop method times the *floor* under a scheme whose decompressor
//! verifies what it rebuilds (the codec bench's `verified_copy`): each packet copied into a
//! frame, then out of it with its TCP or UDP checksum verified, with no header coding at all.
//! Each scheme's row gives its loop time over the floor's (the byte work's share of it).
//!
//! The per-call method adds the clock reads' own cost and the pipeline stall around them to
//! every call, a share that grows as a call gets shorter; the loop method measures the codec
//! alone. Before it times a scheme, the loop checks that its frames deliver every packet as it
//! went in, as many as the evaluation delivered (else the example fails).
//!
//! ```sh
//! cargo run --release -p taroc-cli --example speed -- [--schemes vj,iphc,taroc,taroc-plus] \
//!     [--runs 5] [--min-cpu 0.5] [--json] [CAPTURE_OR_DIR]...   # default: ../shared/captures/linux
//! ```
//!
//! VJ is always run (added if not listed): it is the reference, the floor of what a header
//! compressor costs. The speed goal of `taroc-plus` is 4× ROHC-TCP's packet rate. Run it on an
//! otherwise idle machine, pinned to one core (`taskset -c 1`): other processes on the same
//! cores lengthen every figure.
//!
//! ROHC-TCP (the C ROHC library, U-mode) is timed too when its peer kit's harness is built
//! (`../shared/peers/rohc-tcp/build.sh`; found at `--rohc PATH`, `$ROHC_BENCH`, or the kit's
//! default `$TMPDIR/rohc-tcp-peer/bin/rohc_bench`): on each capture, one run of the harness
//! after each loop run of our schemes and the floor, so that a slow spell of the machine falls
//! on both sides alike; by both methods (its `call_*_ns` and `loop_*_pps`), `--runs` times
//! (the median). Each scheme's
//! row then gives ROHC-TCP's time over its own, per method: how many times ROHC-TCP's packet
//! rate it runs at. Without the harness those columns say `-` and a note says why; nothing of
//! the product depends on it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;
use taroc_cli::capture::{self, CaptureReader};
use taroc_cli::eval::{direction, evaluate, Options, SchemeResult};
use taroc_cli::timing::{measure, Spread, Timing};
use taroc_core::{Compressor, Decompressor, FrameKind, Variant};
use taroc_wire::ip::transport_checksum_ok;

mod peer;

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
    /// Seconds of thread CPU time each loop runs at least (compress, then decompress; per
    /// scheme, capture and run).
    #[arg(long, default_value_t = 0.5, value_name = "SECONDS")]
    min_cpu: f64,
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
    /// Loop method: compression, ns of thread CPU time per packet (median of `--runs`).
    loop_compress_ns: Spread,
    /// Loop method: decompression, ns per frame.
    loop_decompress_ns: Spread,
    /// Loop method: the medians' sum.
    loop_total_ns: f64,
    /// `loop_total_ns` over VJ's.
    loop_ratio_to_vj: f64,
    /// ROHC-TCP's loop compress + decompress ns per packet (from the medians of its rates).
    rohc_loop_total_ns: Option<f64>,
    /// `rohc_loop_total_ns` over `loop_total_ns`.
    loop_times_rohc: Option<f64>,
    /// Loop method: the floor's copy in + copy out and verification, ns per packet (the sum
    /// of the medians of `--runs` runs, interleaved with the schemes').
    floor_loop_total_ns: f64,
    /// `loop_total_ns` over `floor_loop_total_ns`.
    loop_times_floor: f64,
}

/// One scheme's loop-method times on a capture, and what a pass delivers.
struct LoopTimes {
    compress: Spread,
    decompress: Spread,
    /// Packets a pass's frames deliver, each as it went in.
    delivered: u64,
}

/// ROHC-TCP's compress + decompress ns per packet on a capture, by both methods.
#[derive(Debug, Clone, Copy)]
struct RohcTimes {
    call_ns: f64,
    loop_ns: f64,
}

/// Nanoseconds the calling thread has run, as the scheduler counts them (Linux's
/// `/proc/thread-self/schedstat`, which advances at scheduler ticks: loops run long enough
/// that a tick is a small share).
fn thread_cpu_ns() -> Result<u64, String> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat")
        .map_err(|e| format!("the loop method needs /proc/thread-self/schedstat: {e}"))?;
    stat.split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .ok_or_else(|| "/proc/thread-self/schedstat: no run time".to_string())
}

/// Runs `pass` (one pass over `n` packets) until the thread has run `min_cpu`; the thread's CPU
/// time per packet.
fn per_packet(n: usize, min_cpu: Duration, mut pass: impl FnMut()) -> Result<f64, String> {
    let start = thread_cpu_ns()?;
    let mut passes = 0u64;
    loop {
        pass();
        passes += 1;
        let spent = thread_cpu_ns()? - start;
        if spent >= min_cpu.as_nanos() as u64 {
            return Ok(spent as f64 / (passes * n.max(1) as u64) as f64);
        }
    }
}

/// How many of `packets` (each with its link direction) fresh decompressors deliver from the
/// `frames` fresh compressors made of them; an error if one comes out other than it went in.
fn delivered(
    packets: &[(usize, Vec<u8>)],
    frames: &[(usize, FrameKind, Vec<u8>)],
    variant: &Variant,
) -> Result<u64, String> {
    let mut d = [variant.decompressor(), variant.decompressor()];
    let mut out = Vec::new();
    let mut n = 0;
    for (i, ((dir, p), (_, kind, f))) in packets.iter().zip(frames).enumerate() {
        if d[*dir].decompress(*kind, f, &mut out).is_ok() {
            if out != *p {
                return Err(format!("{}: packet {i} decompressed wrong", variant.name));
            }
            n += 1;
        }
    }
    Ok(n)
}

/// The loop method's compress and decompress ns per packet of `variant` over `packets` (each
/// with its link direction), once, and how many packets a pass delivers.
fn loop_once(
    packets: &[(usize, Vec<u8>)],
    variant: &Variant,
    min_cpu: Duration,
) -> Result<(f64, f64, u64), String> {
    let mut compressors = [variant.compressor(), variant.compressor()];
    let frames: Vec<(usize, FrameKind, Vec<u8>)> = packets
        .iter()
        .map(|(dir, p)| {
            let mut frame = Vec::new();
            let kind = compressors[*dir].compress(p, &mut frame);
            (*dir, kind, frame)
        })
        .collect();
    let delivered = delivered(packets, &frames, variant)?;
    let mut frame = Vec::with_capacity(2048);
    let compress = per_packet(packets.len(), min_cpu, || {
        let mut c = [variant.compressor(), variant.compressor()];
        for (dir, p) in packets {
            std::hint::black_box(c[*dir].compress(std::hint::black_box(p), &mut frame));
        }
    })?;
    let mut out = Vec::with_capacity(2048);
    let decompress = per_packet(frames.len(), min_cpu, || {
        let mut d = [variant.decompressor(), variant.decompressor()];
        for (dir, kind, f) in &frames {
            let r = d[*dir].decompress(*kind, std::hint::black_box(f), &mut out);
            std::hint::black_box((r.is_ok(), &out));
        }
    })?;
    Ok((compress, decompress, delivered))
}

/// The loop method's ns per packet of the floor over `packets`: each copied into a frame (its
/// compress), then out of it and its TCP or UDP checksum verified (its decompress).
fn floor_once(packets: &[(usize, Vec<u8>)], min_cpu: Duration) -> Result<(f64, f64), String> {
    let mut frame = Vec::with_capacity(2048);
    let copy_in = per_packet(packets.len(), min_cpu, || {
        for (_, p) in packets {
            frame.clear();
            frame.extend_from_slice(std::hint::black_box(p));
            std::hint::black_box(&frame);
        }
    })?;
    let mut out = Vec::with_capacity(2048);
    let copy_out = per_packet(packets.len(), min_cpu, || {
        for (_, f) in packets {
            out.clear();
            out.extend_from_slice(std::hint::black_box(f));
            std::hint::black_box(transport_checksum_ok(&out));
        }
    })?;
    Ok((copy_in, copy_out))
}

/// Where the peer kit's harness is: `--rohc`, `$ROHC_BENCH`, or the kit's default build path.
fn rohc_harness(given: Option<&PathBuf>) -> Option<PathBuf> {
    given
        .cloned()
        .or_else(|| std::env::var_os("ROHC_BENCH").map(PathBuf::from))
        .or_else(|| Some(std::env::temp_dir().join("rohc-tcp-peer/bin/rohc_bench")))
        .filter(|p| p.is_file())
}

/// ROHC-TCP's compress + decompress ns per packet on `capture` by both methods: one run of
/// the peer harness's `--speed`.
fn rohc_times(harness: &Path, capture: &Path, min_cpu: Duration) -> Result<RohcTimes, String> {
    let min_cpu = min_cpu.as_secs_f64().to_string();
    let row = peer::run(
        harness,
        ["--speed", "--runs", "1", "--min-cpu", &min_cpu],
        capture,
    )?;
    let field = |name: &str| row.field::<f64>(name);
    Ok(RohcTimes {
        call_ns: field("call_comp_ns_med")? + field("call_decomp_ns_med")?,
        loop_ns: 1e9 / field("loop_comp_pps_med")? + 1e9 / field("loop_decomp_pps_med")?,
    })
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

/// The loop method's times of every scheme, the floor's compress + decompress, and ROHC-TCP's
/// times by both methods if `rohc` (its harness) is given: `runs` runs, interleaved (each run
/// times every scheme in turn, then the floor, then ROHC-TCP, one run of the harness), so that
/// the machine's slower and faster spells fall on every codec alike.
fn loop_times(
    path: &Path,
    variants: &[Variant],
    runs: u32,
    min_cpu: Duration,
    rohc: Option<&Path>,
) -> Result<(Vec<LoopTimes>, f64, Option<RohcTimes>), String> {
    let capture = capture::read_file(path).map_err(|e| e.to_string())?;
    let packets: Vec<(usize, Vec<u8>)> = capture
        .packets
        .into_iter()
        .map(|p| (direction(&p), p))
        .collect();
    let mut times = vec![(Vec::new(), Vec::new(), 0); variants.len()];
    let (mut floor_in, mut floor_out) = (Vec::new(), Vec::new());
    let (mut rohc_call, mut rohc_loop) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        for (variant, (compress, decompress, delivered)) in variants.iter().zip(&mut times) {
            let (c, d, n) = loop_once(&packets, variant, min_cpu)?;
            compress.push(c);
            decompress.push(d);
            *delivered = n;
        }
        let (copy_in, copy_out) = floor_once(&packets, min_cpu)?;
        floor_in.push(copy_in);
        floor_out.push(copy_out);
        if let Some(harness) = rohc {
            let r = rohc_times(harness, path, min_cpu)?;
            rohc_call.push(r.call_ns);
            rohc_loop.push(r.loop_ns);
        }
    }
    let floor = Spread::of(&mut floor_in).median + Spread::of(&mut floor_out).median;
    let rohc = rohc.map(|_| RohcTimes {
        call_ns: Spread::of(&mut rohc_call).median,
        loop_ns: Spread::of(&mut rohc_loop).median,
    });
    let times = times
        .into_iter()
        .map(|(mut c, mut d, delivered)| LoopTimes {
            compress: Spread::of(&mut c),
            decompress: Spread::of(&mut d),
            delivered,
        })
        .collect();
    Ok((times, floor, rohc))
}

/// The rows of one capture: `runs` timed runs of every scheme by each method.
fn time_capture(
    path: &Path,
    variants: &[Variant],
    args: &Args,
    rohc: Option<&Path>,
) -> Result<Vec<Row>, String> {
    let (runs, min_cpu) = (args.runs, Duration::from_secs_f64(args.min_cpu));
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let first = each_alone(&name, &bytes, variants)?;
    let timings = measure(runs, |_| each_alone(&name, &bytes, variants))?;
    let (loops, floor, rohc) = loop_times(path, variants, runs, min_cpu, rohc)?;
    let total = |t: &Timing| t.compress_ns_per_packet.median + t.decompress_ns_per_packet.median;
    let loop_total = |l: &LoopTimes| l.compress.median + l.decompress.median;
    let vj = variants.iter().position(|v| v.name == "vj");
    let vj_call = vj.map_or(f64::NAN, |i| total(&timings[i]));
    let vj_loop = vj.map_or(f64::NAN, |i| loop_total(&loops[i]));
    // The loop times a codec that works: its frames deliver what the evaluation's did.
    for (r, lp) in first.iter().zip(&loops) {
        if lp.delivered != r.delivered {
            return Err(format!(
                "{name}: {}'s frames delivered {} packets in the loop, {} in the evaluation",
                r.scheme, lp.delivered, r.delivered
            ));
        }
    }
    Ok(first
        .iter()
        .zip(timings)
        .zip(loops)
        .map(|((r, timing), lp)| Row {
            capture: name.clone(),
            scheme: r.scheme.clone(),
            packets: r.packets,
            compress_ns: timing.compress_ns_per_packet.median,
            decompress_ns: timing.decompress_ns_per_packet.median,
            total_ns: total(&timing),
            ratio_to_vj: total(&timing) / vj_call,
            rohc_total_ns: rohc.map(|r| r.call_ns),
            times_rohc: rohc.map(|r| r.call_ns / total(&timing)),
            timing,
            loop_compress_ns: lp.compress,
            loop_decompress_ns: lp.decompress,
            loop_total_ns: loop_total(&lp),
            loop_ratio_to_vj: loop_total(&lp) / vj_loop,
            rohc_loop_total_ns: rohc.map(|r| r.loop_ns),
            loop_times_rohc: rohc.map(|r| r.loop_ns / loop_total(&lp)),
            floor_loop_total_ns: floor,
            loop_times_floor: loop_total(&lp) / floor,
        })
        .collect())
}

fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<26} {:<12} {:>6} | {:>7} {:>7} {:>7} {:>6} {:>8} {:>6} {:>7} {:>7} | {:>7} {:>6} {:>8} {:>6}\n",
        "capture",
        "scheme",
        "pkts",
        "comp",
        "decomp",
        "total",
        "x VJ",
        "ROHC",
        "xROHC",
        "floor",
        "x floor",
        "total",
        "x VJ",
        "ROHC",
        "xROHC"
    );
    out += &format!(
        "{:<46} | {:<64} | per call, ns per packet\n",
        "", "loop, ns of CPU per packet"
    );
    let x = |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
    for r in rows {
        let capture = Path::new(&r.capture)
            .file_name()
            .map_or(r.capture.clone(), |f| f.to_string_lossy().into_owned());
        out += &format!(
            "{:<26} {:<12} {:>6} | {:>7.1} {:>7.1} {:>7.1} {:>6.2} {:>8} {:>6} {:>7.1} {:>7.2} | {:>7.1} {:>6.2} {:>8} {:>6}\n",
            capture,
            r.scheme,
            r.packets,
            r.loop_compress_ns.median,
            r.loop_decompress_ns.median,
            r.loop_total_ns,
            r.loop_ratio_to_vj,
            x(r.rohc_loop_total_ns, 1),
            x(r.loop_times_rohc, 2),
            r.floor_loop_total_ns,
            r.loop_times_floor,
            r.total_ns,
            r.ratio_to_vj,
            x(r.rohc_total_ns, 1),
            x(r.times_rohc, 2),
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
    if !(args.min_cpu > 0.0 && args.min_cpu <= 60.0) {
        return Err(format!(
            "--min-cpu {}: give seconds in (0, 60]",
            args.min_cpu
        ));
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
        rows.extend(time_capture(path, &variants, &args, rohc.as_deref())?);
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
