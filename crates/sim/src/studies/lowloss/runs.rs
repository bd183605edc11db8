//! The simulated figures: which (topology, BER) cells each figure needs, one run per cell,
//! scheme and seed in parallel on all cores, each run sampling the segments delivered every
//! simulated second.

use std::time::Instant;

use serde::Serialize;

use super::topology::{Topology, SEGMENT_BYTES};
use crate::event::SECOND;
use crate::net::Network;
use crate::scenario::DATA_LINK;
use crate::studies::run_all;

/// The schemes run by default, in the order reports list them: none, the paper's "VJ header
/// compression" (`iphc-plain`), twice (`iphc-twice`), twice + header request (`iphc`), TAROC as
/// drafted and improved, and the paper's ideal lossless compression with 5-byte headers.
pub const DEFAULT_SCHEMES: [&str; 7] = [
    "none",
    "iphc-plain",
    "iphc-twice",
    "iphc",
    "taroc",
    "taroc-plus",
    "ideal-5",
];

/// Figure 19's bit-error rates (10^-9 to 10^-4, with the 2×10^-7 of Figures 12, 14 and 18).
pub const FIGURE_19_BERS: [f64; 7] = [1e-9, 1e-8, 1e-7, 2e-7, 1e-6, 1e-5, 1e-4];

/// A simulated figure of the paper.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// Its number in the paper.
    pub number: u32,
    /// Its topology.
    pub topology: Topology,
    /// Its bit-error rates (one for the figures over time).
    pub bers: &'static [f64],
    /// The schemes the paper plots (ours plots every scheme run).
    pub paper_schemes: &'static [&'static str],
    /// What the paper says of it.
    pub paper: &'static str,
}

/// The simulated figures: 10, 11 (Modem), 12, 14, 18 (WLAN over time), 19 (WLAN against BER).
pub const FIGURES: [Figure; 6] = [
    Figure {
        number: 10,
        topology: Topology::Modem,
        bers: &[2e-7],
        paper_schemes: &["none", "iphc-plain"],
        paper: "compression gives about 16% more throughput",
    },
    Figure {
        number: 11,
        topology: Topology::Modem,
        bers: &[2e-6],
        paper_schemes: &["none", "iphc-plain"],
        paper: "throughput is better with header compression than without",
    },
    Figure {
        number: 12,
        topology: Topology::Wlan,
        bers: &[2e-7],
        paper_schemes: &["none", "iphc-plain"],
        paper: "VJ-style compression drops throughput from 620 to 470 kbit/s (about 25%)",
    },
    Figure {
        number: 14,
        topology: Topology::Wlan,
        bers: &[2e-7],
        paper_schemes: &["none", "ideal-5"],
        paper: "lossless compression: 18% less packet loss, about 28% more throughput",
    },
    Figure {
        number: 18,
        topology: Topology::Wlan,
        bers: &[2e-7],
        paper_schemes: &["none", "iphc-twice", "iphc", "ideal-5"],
        paper: "twice and twice + request grow like ideal lossless, far above none",
    },
    Figure {
        number: 19,
        topology: Topology::Wlan,
        bers: &FIGURE_19_BERS,
        paper_schemes: &["none", "iphc-plain", "iphc-twice", "iphc", "ideal-5"],
        paper: "low-loss beats VJ at low BER and none at high BER, and both around 2e-7",
    },
];

/// How to run the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Seeds per cell.
    pub seeds: u32,
    /// Simulated seconds per run (the paper's figures: 500).
    pub duration_s: f64,
    /// Worker threads (0 = all cores).
    pub threads: usize,
    /// Schemes to run.
    pub schemes: Vec<String>,
    /// Figure 19's bit-error rates.
    pub bers: Vec<f64>,
}

impl Options {
    /// The full study: 3 seeds of 500 s, every default scheme, every BER of Figure 19.
    pub fn full() -> Options {
        Options {
            seeds: 3,
            duration_s: 500.0,
            threads: 0,
            schemes: DEFAULT_SCHEMES.iter().map(|s| s.to_string()).collect(),
            bers: FIGURE_19_BERS.to_vec(),
        }
    }

    /// The quick study: 2 seeds of 200 s, Figure 19 at 1e-8, 2e-7 and 1e-5 only.
    pub fn quick() -> Options {
        Options {
            seeds: 2,
            duration_s: 200.0,
            bers: vec![1e-8, 2e-7, 1e-5],
            ..Options::full()
        }
    }

    /// Checks the options: known schemes, each once, at least one seed, a positive duration.
    pub fn check(&self) -> Result<(), String> {
        crate::scenario::check_schemes(&self.schemes)?;
        if self.seeds == 0 {
            return Err("at least one seed is needed".into());
        }
        if !(self.duration_s >= 1.0 && self.duration_s <= 1e5) {
            return Err("the duration must be between 1 and 100000 s".into());
        }
        Ok(())
    }

    /// The (topology, BER) cells the figures need, each once, in the figures' order.
    pub fn cells(&self) -> Vec<(Topology, f64)> {
        let mut cells: Vec<(Topology, f64)> = Vec::new();
        for figure in FIGURES {
            let bers: &[f64] = if figure.number == 19 {
                &self.bers
            } else {
                figure.bers
            };
            for &ber in bers {
                if !cells.contains(&(figure.topology, ber)) {
                    cells.push((figure.topology, ber));
                }
            }
        }
        cells
    }

    /// The number of simulation runs: cells × schemes × seeds.
    pub fn runs(&self) -> usize {
        self.cells().len() * self.schemes.len() * self.seeds as usize
    }
}

/// One run's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// Application bytes delivered in order per second.
    pub goodput_bytes_per_s: f64,
    /// 512-byte segments delivered in order at the end.
    pub delivered_segments: f64,
    /// Segments delivered by the end of each simulated second (index 0: after 1 s).
    pub series: Vec<f64>,
    /// Data frames sent on the wireless hop.
    pub data_frames: u64,
    /// Data frames hit by a bit error on the wireless hop.
    pub data_frames_lost: u64,
    /// Data frames the decompressor dropped (its context was wrong or missing).
    pub decompressor_drops: u64,
}

impl Run {
    /// The share of data frames lost to bit errors.
    pub fn loss_rate(&self) -> f64 {
        self.data_frames_lost as f64 / self.data_frames.max(1) as f64
    }
}

/// Runs one scenario, sampling the receiver every second.
pub fn run_one(topology: Topology, scheme: &str, ber: f64, duration_s: f64, seed: u64) -> Run {
    let scenario = topology.scenario(scheme, ber, duration_s, seed);
    let Ok(mut net) = scenario.build() else {
        return Run {
            goodput_bytes_per_s: f64::NAN,
            delivered_segments: f64::NAN,
            series: Vec::new(),
            data_frames: 0,
            data_frames_lost: 0,
            decompressor_drops: 0,
        };
    };
    let delivered = |net: &Network| net.nodes[2].agent.delivered_bytes();
    let seconds = duration_s.ceil() as u64;
    let mut series = Vec::with_capacity(seconds as usize);
    for s in 1..=seconds {
        let until = ((s as f64).min(duration_s) * SECOND as f64) as u64;
        net.run_until(until);
        series.push(delivered(&net) as f64 / SEGMENT_BYTES as f64);
    }
    let bytes = delivered(&net);
    let link = net.links[DATA_LINK].stats;
    Run {
        goodput_bytes_per_s: bytes as f64 / duration_s,
        delivered_segments: bytes as f64 / SEGMENT_BYTES as f64,
        series,
        data_frames: link.frames,
        data_frames_lost: link.corrupted,
        decompressor_drops: link.decompressor_drops,
    }
}

/// Every run of one (topology, BER, scheme) cell: one per seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The topology.
    pub topology: Topology,
    /// The bit-error rate.
    pub ber: f64,
    /// The scheme.
    pub scheme: String,
    /// The runs, seeds 1, 2, …
    pub runs: Vec<Run>,
}

impl Cell {
    /// The mean over seeds of `f`.
    pub fn mean(&self, f: impl Fn(&Run) -> f64) -> f64 {
        self.runs.iter().map(f).sum::<f64>() / self.runs.len().max(1) as f64
    }

    /// The mean goodput, bytes per second.
    pub fn goodput(&self) -> f64 {
        self.mean(|r| r.goodput_bytes_per_s)
    }

    /// The mean goodput, kbit/s.
    pub fn kbps(&self) -> f64 {
        self.goodput() * 8.0 / 1000.0
    }

    /// The mean segments delivered.
    pub fn delivered(&self) -> f64 {
        self.mean(|r| r.delivered_segments)
    }

    /// The mean delivered-segments curve over time.
    pub fn series(&self) -> Vec<(f64, f64)> {
        let len = self.runs.iter().map(|r| r.series.len()).min().unwrap_or(0);
        (0..len)
            .map(|i| ((i + 1) as f64, self.mean(|r| r.series[i])))
            .collect()
    }
}

/// Every cell of a study.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// The options it ran with.
    pub options: Options,
    /// The cells.
    pub cells: Vec<Cell>,
    /// Wall-clock seconds the study took.
    pub wall_s: f64,
}

impl Results {
    /// The cell of `topology`, `ber` and `scheme`, if it ran.
    pub fn cell(&self, topology: Topology, ber: f64, scheme: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.topology == topology && c.ber == ber && c.scheme == scheme)
    }
}

/// Runs the study; `progress(done)` is called after each run (from worker threads).
pub fn run(options: &Options, progress: &(dyn Fn(usize) + Sync)) -> Results {
    let start = Instant::now();
    let mut jobs = Vec::new();
    for (topology, ber) in options.cells() {
        for scheme in &options.schemes {
            for seed in 1..=u64::from(options.seeds) {
                jobs.push((topology, ber, scheme.as_str(), seed));
            }
        }
    }
    let runs = run_all(
        &jobs,
        options.threads,
        progress,
        |&(t, ber, scheme, seed)| run_one(t, scheme, ber, options.duration_s, seed),
    );
    let mut cells: Vec<Cell> = Vec::new();
    for (&(topology, ber, scheme, _), run) in jobs.iter().zip(runs) {
        match cells.last_mut() {
            Some(c) if c.topology == topology && c.ber == ber && c.scheme == scheme => {
                c.runs.push(run)
            }
            _ => cells.push(Cell {
                topology,
                ber,
                scheme: scheme.to_string(),
                runs: vec![run],
            }),
        }
    }
    Results {
        options: options.clone(),
        cells,
        wall_s: start.elapsed().as_secs_f64(),
    }
}
