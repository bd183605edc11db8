//! The robustness sweep: schemes over captures at random and bursty link loss, several
//! seeds, on all cores, counting context damage per 1000 intact frames (pooled over every
//! capture, and on the many-flows capture alone), incorrect deliveries and the longest outage,
//! beside ROHC-TCP U-mode's: measured in the same run with the peer kit's harness (`--rohc`), else
//! its published figures at random loss.
//!
//! ```sh
//! cargo run --release -p taroc-cli --example robustness -- \
//!     [--schemes taroc-plus,vj] [--captures DIR_OR_FILE]... [--many-flows FILE] \
//!     [--loss 1,5,10,20,30,50] [--burst 4] [--no-burst] [--seeds 1-5] [--json] [--plot FILE.svg|.png] \
//!     [--rohc $(../shared/peers/rohc-tcp/build.sh)] [--one-way forward|reverse]
//! ```
//!
//! Every run is one `taroc eval` of one capture with `--loss P [--burst L] --seed S` and every
//! scheme in lockstep ([`taroc_cli::eval::evaluate`]); runs go in parallel on all cores. A row
//! adds up the runs of one scheme and one loss model over the captures and seeds. *Intact
//! frames* are the packet frames the link delivered (sent minus lost); *damage* the intact
//! frames a decompressor refused for a missing or damaged context. Captures are found
//! recursively under each `--captures` directory (files ending in `.pcap`, `.pcapng`, `.cap`);
//! those `taroc eval` cannot read, or that hold no IP packet, are left out (listed on stderr).
//! Exit status: 0 done, 1 a run failed or no capture was readable, 2 bad command line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use clap::Parser;
use serde::Serialize;
use taroc_cli::capture::{self, CaptureReader};
use taroc_cli::eval::{evaluate, one_way_pcap, Options, SchemeResult, Way};
use taroc_core::Variant;
use taroc_sim::progress::Progress;

#[path = "../peer/mod.rs"]
mod peer;
mod reference;
mod report;
mod rohc;

use reference::rohc_reference;
use report::{plot_svg, table, write_plot};

/// The robustness sweep (see the example's documentation).
#[derive(Debug, Parser)]
#[command(name = "robustness")]
struct Args {
    /// Schemes, comma-separated (any name `taroc eval --scheme` takes).
    #[arg(long, value_delimiter = ',', default_value = "taroc-plus", value_parser = Variant::parse)]
    schemes: Vec<Variant>,
    /// Capture files or directories (searched recursively), pooled [default: ../shared/captures,
    /// or $TAROC_SHARED_CAPTURES].
    #[arg(long)]
    captures: Vec<PathBuf>,
    /// The many-flows capture, also reported alone [default: linux/f_many_flows_v4.pcap under
    /// the shared captures].
    #[arg(long)]
    many_flows: Option<PathBuf>,
    /// Link loss rates in percent, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,5,10,20,30,50")]
    loss: Vec<f64>,
    /// Mean loss-burst lengths (Gilbert–Elliott, as `taroc eval --burst`), each swept besides
    /// random loss.
    #[arg(long, value_delimiter = ',', default_value = "4")]
    burst: Vec<f64>,
    /// Random loss only (no bursty sweep).
    #[arg(long)]
    no_burst: bool,
    /// Seeds: a range `A-B` or a comma-separated list.
    #[arg(long, default_value = "1-5", value_parser = parse_seeds)]
    seeds: Seeds,
    /// One JSON object per row on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Draw damage per 1000 intact frames against loss (log scale) to this SVG or PNG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// List every file left out, and why.
    #[arg(long)]
    verbose: bool,
    /// Worker threads [default: the number of cores].
    #[arg(long)]
    threads: Option<usize>,
    /// The peer kit's ROHC harness (`../shared/peers/rohc-tcp/build.sh` builds it and prints
    /// its path): ROHC-TCP U-mode measured on the same captures, loss models and seeds, in
    /// place of the published figures (every row, bursty ones too).
    #[arg(long)]
    rohc: Option<PathBuf>,
    /// Only this direction of every capture crosses the link (forward: from the lower address
    /// to the higher; reverse: the other way), as on a downlink whose return path is another
    /// network: the schemes and ROHC-TCP get the same packets, and no frame comes back.
    #[arg(long, value_name = "WAY", value_enum)]
    one_way: Option<Way>,
}

/// A list of seeds.
#[derive(Debug, Clone)]
struct Seeds(Vec<u64>);

fn parse_seeds(text: &str) -> Result<Seeds, String> {
    let bad = || format!("`{text}` is not a seed range A-B or a list of seeds");
    if let Some((a, b)) = text.split_once('-') {
        let (a, b): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        return if a <= b {
            Ok(Seeds((a..=b).collect()))
        } else {
            Err(bad())
        };
    }
    let seeds: Result<Vec<u64>, _> = text.split(',').map(str::parse).collect();
    seeds.map(Seeds).map_err(|_| bad())
}

/// The shared captures beside the checkout.
fn shared_captures() -> PathBuf {
    std::env::var_os("TAROC_SHARED_CAPTURES")
        .map_or_else(|| PathBuf::from("../shared/captures"), PathBuf::from)
}

/// Capture files under `path` (itself if a file), sorted.
fn capture_files(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if !path.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let capture = p
            .extension()
            .is_some_and(|e| e == "pcap" || e == "pcapng" || e == "cap");
        if p.is_dir() || capture {
            capture_files(&p, out)?;
        }
    }
    Ok(())
}

/// A capture held in memory, with its IP packet count and the file that holds the same
/// packets (for the ROHC harness).
struct Capture {
    name: String,
    bytes: Vec<u8>,
    packets: u64,
    file: PathBuf,
}

/// Reads `path`, only the packets of direction `way` if one (written to a file of their own
/// in `dir`, named after the capture's position `n`); `Err` says why it is left out
/// (unreadable, or no IP packet).
fn load(path: &Path, way: Option<(Way, &Path)>, n: usize) -> Result<Capture, String> {
    let name = path.display().to_string();
    let mut bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let mut file = path.to_path_buf();
    if let Some((way, dir)) = way {
        let capture = capture::parse(&name, &bytes).map_err(|e| e.to_string())?;
        bytes = one_way_pcap(&capture, way);
        file = dir.join(format!("{n}.pcap"));
        std::fs::write(&file, &bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let mut reader = CaptureReader::new(name.clone(), &bytes[..]).map_err(|e| e.to_string())?;
    let mut packets = 0u64;
    while reader.next_packet().map_err(|e| e.to_string())?.is_some() {
        packets += 1;
    }
    if packets == 0 {
        return Err(format!("{name}: no IP packet"));
    }
    Ok(Capture {
        name,
        bytes,
        packets,
        file,
    })
}

/// A link-loss model of the sweep: a rate and, for bursty loss, a mean burst length.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
struct Model {
    loss_percent: f64,
    burst: Option<f64>,
}

/// The counts of one scheme under one model, added over runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
struct Counts {
    runs: u64,
    packets: u64,
    intact: u64,
    damage: u64,
    damage_per_1000: f64,
    incorrect: u64,
    undetected: u64,
    longest_outage_packets: u64,
    unended_outages: u64,
    longest_refused_run: u64,
    longest_refused_run_s: f64,
}

impl Counts {
    fn add(&mut self, r: &SchemeResult) {
        self.runs += 1;
        self.packets += r.packets;
        self.intact += r.packets - r.link_lost;
        self.damage += r.context_damage_lost;
        self.incorrect += r.incorrect_delivered;
        self.undetected += r.incorrect_undetected;
        self.longest_outage_packets = self
            .longest_outage_packets
            .max(r.outage.longest_outage_packets);
        self.unended_outages += r.outage.unended_outages;
        self.longest_refused_run = self.longest_refused_run.max(r.outage.longest_refused_run);
        self.longest_refused_run_s = self
            .longest_refused_run_s
            .max(r.outage.longest_refused_run_s);
        self.damage_per_1000 = per_1000(self.damage, self.intact);
    }
}

fn per_1000(count: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        1000.0 * count as f64 / of as f64
    }
}

/// One row of the report: a scheme under one model, pooled and on the many-flows capture.
#[derive(Debug, Clone, Serialize)]
struct Row {
    scheme: String,
    loss_percent: f64,
    burst: Option<f64>,
    captures: usize,
    pooled: Counts,
    many_flows: Option<Counts>,
    /// ROHC-TCP U-mode's pooled damage per 1000: measured in this run (`--rohc`), else the
    /// published figure at this random loss rate.
    rohc_tcp_u_mode_per_1000: Option<f64>,
    /// Whether that figure was measured in this run.
    rohc_measured: bool,
    /// The damage of each capture that had any (pooled or many-flows), over the seeds: where
    /// it comes from.
    damage_by_capture: BTreeMap<String, u64>,
}

/// What one run of every scheme over one capture gave.
type RunResult = Result<Vec<SchemeResult>, String>;

/// Runs every model × seed × capture with every scheme, `threads` at a time, and adds up the
/// rows: pooled over `pooled` (indices into `captures`) and alone on `many_flows`.
fn sweep(
    captures: &[Capture],
    pooled: &[usize],
    many_flows: Option<usize>,
    variants: &[Variant],
    models: &[Model],
    seeds: &[u64],
    threads: usize,
) -> Result<Vec<Row>, String> {
    let mut files: Vec<usize> = pooled.to_vec();
    files.extend(many_flows.filter(|f| !pooled.contains(f)));
    let mut jobs: Vec<(Model, u64, usize)> = Vec::new();
    for &model in models {
        for &seed in seeds {
            jobs.extend(files.iter().map(|&c| (model, seed, c)));
        }
    }
    let progress = Progress::new(jobs.len() as u64, "runs", true);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, RunResult)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(model, seed, c)) = jobs.get(i) else {
                    break;
                };
                let options = Options {
                    loss: model.loss_percent / 100.0,
                    burst: model.burst,
                    seed,
                    ..Options::default()
                };
                let capture = &captures[c];
                let result = CaptureReader::new(capture.name.clone(), &capture.bytes[..])
                    .map_err(|e| e.to_string())
                    .and_then(|mut reader| evaluate(&mut reader, variants, &options, |_| {}));
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, result));
                progress.set(done.fetch_add(1, Ordering::Relaxed) as u64 + 1);
            });
        }
    });
    progress.finish();
    let mut pooled_counts: BTreeMap<(usize, usize), Counts> = BTreeMap::new();
    let mut alone: BTreeMap<(usize, usize), Counts> = BTreeMap::new();
    let mut by_capture: BTreeMap<(usize, usize), BTreeMap<String, u64>> = BTreeMap::new();
    let model_index = |m: Model| models.iter().position(|x| *x == m).unwrap_or(0);
    for (i, result) in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        let (model, _, c) = jobs[i];
        for (s, r) in result?.iter().enumerate() {
            let key = (s, model_index(model));
            if r.context_damage_lost > 0 {
                *by_capture
                    .entry(key)
                    .or_default()
                    .entry(captures[c].name.clone())
                    .or_default() += r.context_damage_lost;
            }
            if pooled.contains(&c) {
                pooled_counts.entry(key).or_default().add(r);
            }
            if Some(c) == many_flows {
                alone.entry(key).or_default().add(r);
            }
        }
    }
    let mut rows = Vec::new();
    for (s, variant) in variants.iter().enumerate() {
        for (m, &model) in models.iter().enumerate() {
            rows.push(Row {
                scheme: variant.name.to_string(),
                loss_percent: model.loss_percent,
                burst: model.burst,
                captures: pooled.len(),
                pooled: pooled_counts.remove(&(s, m)).unwrap_or_default(),
                many_flows: alone.remove(&(s, m)),
                rohc_tcp_u_mode_per_1000: rohc_reference(model),
                rohc_measured: false,
                damage_by_capture: by_capture.remove(&(s, m)).unwrap_or_default(),
            });
        }
    }
    Ok(rows)
}

/// The loss models of the sweep: random loss at each rate, then bursty loss at each rate for each
/// burst length. Fails if a combination is impossible (a usage error).
fn models(args: &Args) -> Result<Vec<Model>, String> {
    let mut bursts: Vec<Option<f64>> = vec![None];
    if !args.no_burst {
        bursts.extend(args.burst.iter().map(|&b| Some(b)));
    }
    let models: Vec<Model> = bursts
        .iter()
        .flat_map(|&burst| {
            args.loss.iter().map(move |&loss_percent| Model {
                loss_percent,
                burst,
            })
        })
        .collect();
    for m in &models {
        taroc_cli::impair::LossModel::new(m.loss_percent / 100.0, m.burst)?;
    }
    Ok(models)
}

fn run(args: Args) -> Result<(), String> {
    let variants = args.schemes.clone();
    let roots = if args.captures.is_empty() {
        vec![shared_captures()]
    } else {
        args.captures.clone()
    };
    let mut paths = Vec::new();
    for root in &roots {
        capture_files(root, &mut paths)?;
    }
    let many_flows = args
        .many_flows
        .clone()
        .unwrap_or_else(|| shared_captures().join("linux/f_many_flows_v4.pcap"));
    let way = args.one_way;
    let dir = std::env::temp_dir().join(format!("taroc-robustness-{}", std::process::id()));
    if way.is_some() {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let result = sweep_captures(
        &args,
        &variants,
        &paths,
        &many_flows,
        way.map(|w| (w, &*dir)),
    );
    if way.is_some() {
        // Best effort: the files are copies.
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

/// The sweep over `paths` (and `many_flows`), only direction `way` of each if one (its
/// packets written to files in the directory given with it, for the ROHC harness).
fn sweep_captures(
    args: &Args,
    variants: &[Variant],
    paths: &[PathBuf],
    many_flows: &Path,
    way: Option<(Way, &Path)>,
) -> Result<(), String> {
    let mut captures = Vec::new();
    let mut pooled = Vec::new();
    let mut left_out = 0;
    for path in paths {
        match load(path, way, captures.len()) {
            Ok(c) => {
                pooled.push(captures.len());
                captures.push(c);
            }
            Err(why) => {
                left_out += 1;
                if args.verbose {
                    eprintln!("robustness: left out {why}");
                }
            }
        }
    }
    if left_out > 0 && !args.verbose {
        eprintln!(
            "robustness: left out {left_out} files that taroc eval cannot read or that hold no IP \
             packet (--verbose lists them)"
        );
    }
    let f = match captures
        .iter()
        .position(|c| Path::new(&c.name) == many_flows)
    {
        Some(i) => Some(i),
        None => match load(many_flows, way, captures.len()) {
            Ok(c) => {
                captures.push(c);
                Some(captures.len() - 1)
            }
            Err(why) => {
                eprintln!("robustness: no many-flows figures: {why}");
                None
            }
        },
    };
    if pooled.is_empty() {
        return Err("no readable capture".into());
    }
    let models = models(args)?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    eprintln!(
        "robustness: {} captures pooled ({} packets{}), many-flows {}, {} models x {} seeds, {} \
         threads",
        pooled.len(),
        pooled.iter().map(|&i| captures[i].packets).sum::<u64>(),
        match way {
            Some((Way::Forward, _)) => ", the forward direction alone",
            Some(_) => ", the reverse direction alone",
            None => "",
        },
        f.map_or("none", |i| captures[i].name.as_str()),
        models.len(),
        args.seeds.0.len(),
        threads
    );
    let mut rows = sweep(
        &captures,
        &pooled,
        f,
        variants,
        &models,
        &args.seeds.0,
        threads,
    )?;
    if let Some(bin) = &args.rohc {
        let files: Vec<&Path> = pooled.iter().map(|&i| captures[i].file.as_path()).collect();
        for &model in &models {
            eprintln!(
                "robustness: ROHC-TCP U-mode at {}%{}",
                model.loss_percent,
                model
                    .burst
                    .map_or(String::new(), |b| format!(" in bursts of {b}"))
            );
            let measured = rohc::damage_per_1000(bin, &files, model, &args.seeds.0)?;
            for row in rows
                .iter_mut()
                .filter(|r| (r.loss_percent, r.burst) == (model.loss_percent, model.burst))
            {
                row.rohc_tcp_u_mode_per_1000 = Some(measured);
                row.rohc_measured = true;
            }
        }
    }
    if args.json {
        for row in &rows {
            println!("{}", serde_json::to_string(row).map_err(|e| e.to_string())?);
        }
    } else {
        print!("{}", table(&rows));
    }
    if let Some(path) = &args.plot {
        write_plot(path, &plot_svg(&rows, pooled.len()))?;
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
    if let Err(e) = models(&args) {
        eprintln!("robustness: {e}");
        return ExitCode::from(2);
    }
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("robustness: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taroc_plus_is_never_wrong_and_damage_is_counted_on_many_flows() {
        // The many-flows capture of the unseen set, which is part of the repository.
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../captures/unseen/f_many_flows_v4.pcap"
        );
        let captures = [load(Path::new(file), None, 0).unwrap()];
        let variants = ["taroc-plus", "iphc-twice"].map(|s| Variant::parse(s).unwrap());
        let models = [10.0, 30.0].map(|loss_percent| Model {
            loss_percent,
            burst: None,
        });
        let rows = sweep(&captures, &[0], Some(0), &variants, &models, &[1], 2).unwrap();
        assert_eq!(rows.len(), 4);
        for row in &rows {
            let p = &row.pooled;
            assert_eq!(p.runs, 1);
            assert!(p.intact < p.packets && p.intact > 0, "{row:?}");
            assert_eq!(
                p.damage_per_1000,
                1000.0 * p.damage as f64 / p.intact as f64
            );
            assert_eq!(row.many_flows.as_ref(), Some(p));
            if row.scheme == "taroc-plus" {
                assert_eq!(p.incorrect, 0, "{row:?}");
            } else {
                // IPHC without header requests loses TCP contexts the twice algorithm cannot
                // repair: damage must show.
                assert!(p.damage > 0, "{row:?}");
            }
        }
        assert_eq!(rows[0].rohc_tcp_u_mode_per_1000, Some(1.80));
        let text = table(&rows);
        assert_eq!(text.lines().count(), 5);
        assert!(plot_svg(&rows, 1).starts_with("<svg"));
    }

    #[test]
    fn seeds_parse_as_ranges_and_lists() {
        assert_eq!(parse_seeds("1-5").unwrap().0, vec![1, 2, 3, 4, 5]);
        assert_eq!(parse_seeds("3,9").unwrap().0, vec![3, 9]);
        assert!(parse_seeds("5-1").is_err() && parse_seeds("x").is_err());
    }
}
