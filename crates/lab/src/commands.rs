//! What the lab's subcommands of `taroc gateway` do with their parsed command lines
//! ([`crate::args`]): `bench` and `transfer`, reported with the exit status every taroc command
//! uses (`resume` runs from [`crate::resume::run`]).

use std::net::TcpListener;
use std::time::Instant;

use serde::Serialize;
use taroc_core::variant::Variant;
use taroc_gateway::args::clamped_duration;
use taroc_gateway::commands::print_out;
use taroc_gateway::{serial, signal, Error};

use crate::args::{BenchArgs, TransferArgs};
use crate::bench::{self, ForwardingConfig, GridConfig};
use crate::harness;
use crate::transfer::{self, TransferConfig};

/// Runs `taroc gateway transfer`.
pub fn run_transfer(args: &TransferArgs) -> Result<(), Error> {
    if let Some(ns) = &args.netns {
        taroc_gateway::netns::enter(ns)?;
    }
    signal::install()?;
    let config = TransferConfig {
        bytes: args.bytes,
        seed: args.seed,
        time_limit: clamped_duration(args.time_limit),
    };
    let deadline = Instant::now() + config.time_limit;
    #[derive(serde::Serialize)]
    struct Report {
        role: &'static str,
        bytes: u64,
        bytes_sent: Option<u64>,
        bytes_received: Option<u64>,
        first_mismatch: Option<u64>,
        elapsed_s: Option<f64>,
        goodput_bytes_per_s: Option<f64>,
        completed: bool,
        intact: bool,
    }
    let report = match (args.receive, args.send) {
        (Some(addr), _) => {
            let listener = TcpListener::bind(addr)
                .map_err(|e| Error::io(format!("listening on {addr}"), e))?;
            eprintln!("taroc gateway transfer: listening on {addr}");
            let r = transfer::receive(listener, &config, deadline, &signal::STOP)?;
            Report {
                role: "receive",
                bytes: args.bytes,
                bytes_sent: None,
                bytes_received: Some(r.bytes_received),
                first_mismatch: r.first_mismatch,
                elapsed_s: Some(r.elapsed_ns as f64 / 1e9),
                goodput_bytes_per_s: Some(r.goodput()),
                completed: r.completed,
                intact: r.completed && r.first_mismatch.is_none() && r.bytes_received == args.bytes,
            }
        }
        (None, Some(addr)) => {
            let started = Instant::now();
            let (sent, closed) = transfer::send(addr, &config, deadline, &signal::STOP)?;
            Report {
                role: "send",
                bytes: args.bytes,
                bytes_sent: Some(sent),
                bytes_received: None,
                first_mismatch: None,
                elapsed_s: Some(started.elapsed().as_secs_f64()),
                goodput_bytes_per_s: None,
                completed: closed,
                intact: closed && sent == args.bytes,
            }
        }
        (None, None) => return Err(Error::new("give --send or --receive")),
    };
    match serde_json::to_string(&report) {
        Ok(line) => print_out(&format!("{line}\n"))?,
        Err(e) => return Err(Error::new(format!("JSON: {e}"))),
    }
    if report.intact {
        Ok(())
    } else {
        Err(Error::new(format!(
            "the stream did not arrive whole and unchanged ({} of {} bytes{})",
            report.bytes_received.or(report.bytes_sent).unwrap_or(0),
            args.bytes,
            match report.first_mismatch {
                Some(at) => format!(", first wrong byte at {at}"),
                None => String::new(),
            }
        )))
    }
}

/// What a bench prints as its records come: each as a JSON line on standard output with
/// `--json`, else a progress line on standard error; and at the end its table, unless JSON. The
/// first write to standard output that failed is kept, and returned by [`Records::finish`].
struct Records {
    json: bool,
    failed: Option<Error>,
}

impl Records {
    fn new(json: bool) -> Records {
        Records { json, failed: None }
    }

    /// Prints `record`: as a JSON line with `--json`, else `progress()` on standard error.
    fn record<R: Serialize>(&mut self, record: &R, progress: impl FnOnce() -> String) {
        if self.json {
            self.json_line(record, print_out);
        } else {
            eprintln!("{}", progress());
        }
    }

    /// Writes `record` as a JSON line through `write` (unless a write failed already).
    fn json_line<R: Serialize>(
        &mut self,
        record: &R,
        write: impl FnOnce(&str) -> Result<(), Error>,
    ) {
        if self.failed.is_none() {
            if let Ok(line) = serde_json::to_string(record) {
                self.failed = write(&format!("{line}\n")).err();
            }
        }
    }

    /// The first failed write, or `table()` printed unless JSON.
    fn finish(self, table: impl FnOnce() -> String) -> Result<(), Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if !self.json {
            print_out(&table())?;
        }
        Ok(())
    }
}

/// `taroc gateway bench --transports`.
fn run_transport_bench(args: &BenchArgs, variants: &[Variant]) -> Result<(), Error> {
    let total = variants.len() * bench::TRANSPORTS.len();
    let mut done = 0;
    let mut out = Records::new(args.json);
    let (bytes, jobs) = (args.bytes, args.jobs.max(1));
    let records = bench::run_transport_bench(variants, bytes, jobs, args.seed, |r| {
        done += 1;
        out.record(r, || {
            format!(
                "[{done}/{total}] {} {}: {:.1} medium bytes per packet",
                r.transport,
                r.scheme,
                r.medium_bytes as f64 / r.packets.max(1) as f64
            )
        });
    })?;
    out.finish(|| bench::transport_table(&records))
}

/// `taroc gateway bench --serial`.
fn run_serial_bench(args: &BenchArgs, variants: Vec<Variant>) -> Result<(), Error> {
    for &baud in &args.bauds {
        if serial::baud_rate(baud).is_none() {
            return Err(Error::usage(format!(
                "--bauds {baud}: not a rate a serial line can be set to (one of: {})",
                serial::BAUD_RATES
            )));
        }
    }
    let mut lines = Vec::new();
    for &baud in &args.bauds {
        for kiss in [false, true] {
            for mtu in [296, 1500] {
                lines.push(bench::Line { baud, kiss, mtu });
            }
        }
    }
    let config = bench::SerialBenchConfig {
        variants,
        lines,
        seconds: 8.0,
        exchanges: 40,
        authenticated: false,
        jobs: args.jobs.max(1),
        seed: args.seed,
    };
    let total = config.lines.len() * config.variants.len();
    let mut done = 0;
    let mut out = Records::new(args.json);
    let records = bench::run_serial_bench(&config, |r| {
        done += 1;
        out.record(r, || {
            format!(
                "[{done}/{total}] {} baud {} MTU {} {}: {:.0} B/s, echo {:.2} s",
                r.line.baud,
                if r.line.kiss { "kiss" } else { "hdlc" },
                r.line.mtu,
                r.scheme,
                r.goodput,
                r.echo_s
            )
        });
    })?;
    out.finish(|| bench::serial_table(&records))
}

/// Runs `taroc gateway bench`.
pub fn run_bench(args: &BenchArgs) -> Result<(), Error> {
    harness::check_environment()?;
    // SIGINT/SIGTERM stop the running transfers and gateways; every namespace is cleaned up.
    signal::install()?;
    let variants = if args.schemes.is_empty() {
        Variant::all()
    } else {
        args.schemes.clone()
    };
    if args.forwarding {
        let config = ForwardingConfig {
            variants,
            links: args.link.clone(),
            seconds: args.forwarding_seconds,
            rounds: args.rounds.max(1),
            mtu: args.mtu.unwrap_or(1500),
            ip_version: args.ip,
        };
        let mut out = Records::new(args.json);
        let records = bench::run_forwarding(&config, |r| {
            out.record(r, || {
                format!(
                    "round {} {} ({}): {:.1} Mbit/s, {:.0} ns CPU/packet",
                    r.round,
                    r.path,
                    r.link.name(),
                    r.mbit_per_s,
                    r.cpu_ns_per_packet
                )
            });
        })?;
        return out.finish(|| bench::forwarding_table(&records));
    }
    if args.serial {
        return run_serial_bench(args, variants);
    }
    if args.transports {
        return run_transport_bench(args, &variants);
    }
    let config = GridConfig {
        variants,
        rates_kbps: args.rates.clone(),
        bers: args.bers.clone(),
        timestamps: args.timestamps.clone(),
        ip_version: args.ip,
        mtu: args.mtu,
        delay: clamped_duration(args.delay / 1000.0),
        queue: args.queue,
        duration: clamped_duration(args.duration),
        time_limit: clamped_duration(args.time_limit.unwrap_or(4.0 * args.duration + 30.0)),
        congestion_control: args.cc.clone(),
        jobs: args.jobs.max(1),
        seed: args.seed,
    };
    let total = config.rates_kbps.len()
        * config.bers.len()
        * config.timestamps.len()
        * config.variants.len();
    let mut done = 0;
    let bar = bench::progress_bar(total as u64);
    let mut out = Records::new(args.json);
    let records = bench::run_grid(&config, |r| {
        done += 1;
        bar.inc(1);
        if args.json {
            out.json_line(r, |line| bar.suspend(|| print_out(line)));
        }
        bar.suspend(|| {
            eprintln!(
                "[{done}/{total}] {} {} kbit/s BER {:e} MTU {} TS {}: {:.0} B/s{}, incorrect {}",
                r.scheme,
                r.rate_kbps,
                r.ber,
                r.mtu,
                if r.timestamps { "on" } else { "off" },
                r.goodput_bytes_per_s,
                if r.completed { "" } else { " (time limit)" },
                r.incorrect_delivered
            )
        });
    });
    bar.finish_and_clear();
    let records = records?;
    out.finish(|| bench::grid_table(&records))
}
